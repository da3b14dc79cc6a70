import Synchronization

/// A subscription whose signals are handled synchronously on the connection's own thread
/// (``DBusConnection/handleSignals(_:batchEnded:handler:)``): no buffer, no task hop per signal.
///
/// The handler runs for each matching signal in arrival order, between the connection's reads; it must not block
/// (no waiting on other tasks, no blocking system calls) and should be quick, because the connection reads nothing
/// else meanwhile. A slow handler is backpressure: the bus holds what the connection has not read. `batchEnded`
/// runs after each run of dispatched messages in which the handler was called, so a consumer woken per batch costs
/// one wake-up per batch under a flood.
///
/// ``cancel()`` (or the connection closing) ends the subscription and removes its rule from the bus.
public final class DBusSignalHandler: Sendable {
    private let cancellation: Mutex<(@Sendable () -> Void)?>

    init(cancel: @escaping @Sendable () -> Void) {
        cancellation = Mutex(cancel)
    }

    deinit { cancel() }

    /// Stops calling the handler and removes the match rule (`RemoveMatch`). Idempotent.
    public func cancel() {
        let cancel = cancellation.withLock { action in
            defer { action = nil }
            return action
        }
        cancel?()
    }
}

extension DBusConnection {
    /// Calls `handler` on the connection's thread for every signal matching `rule` (see ``DBusSignalHandler``).
    ///
    /// The rule is active on the bus (its `AddMatch` answered) before this returns. Keep the returned handle: the
    /// subscription ends when it is cancelled or released.
    public func handleSignals(
        _ rule: MatchRule, batchEnded: (@Sendable () -> Void)? = nil,
        handler: @escaping @Sendable (DBusMessage) -> Void
    ) async throws -> DBusSignalHandler {
        let trackedName = rule.sender.flatMap { MatchRule.isTrackedName($0) ? $0 : nil }
        if let trackedName { try await trackOwner(of: trackedName) }
        let router = core.signals
        let id = router.makeID()
        let ruleText = rule.ruleString
        let subscription = DBusSignalHandler { [weak self] in
            router.remove(id)
            guard let self else { return }
            try? self.callNoReply(
                destination: BusNames.bus, path: BusNames.busPath, interface: BusNames.bus, member: "RemoveMatch",
                arguments: [.string(ruleText)])
            if let trackedName { self.untrackOwner(of: trackedName) }
        }
        guard router.add(id, SignalRouter.Subscription(rule: rule, target: .handler(handler, batchEnded: batchEnded)))
        else {
            subscription.cancel()
            throw DBusError.disconnected()
        }
        do {
            _ = try await callBus("AddMatch", [.string(ruleText)])
        } catch {
            subscription.cancel()
            throw error
        }
        return subscription
    }
}

extension NameOwnerChange {
    /// The change a `NameOwnerChanged` signal carries; nil for a malformed one.
    public init?(signal: DBusMessage) {
        guard let (name, old, new) = try? signal.decode(String.self, String.self, String.self) else { return nil }
        self.init(name: name, oldOwner: old.isEmpty ? nil : old, newOwner: new.isEmpty ? nil : new)
    }
}

extension MatchRule {
    /// `NameOwnerChanged` of `name` (or of every name), as the bus sends it.
    public static func nameOwnerChanged(of name: String? = nil) -> MatchRule {
        MatchRule(
            sender: BusNames.bus, interface: BusNames.bus, member: "NameOwnerChanged", path: BusNames.busPath,
            arguments: name.map { [0: $0] } ?? [:])
    }
}
