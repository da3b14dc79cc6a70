/// A signal message (the elements of ``DBusSignalStream``).
public typealias DBusSignal = DBusMessage

/// How many signals a subscription buffers for a consumer that falls behind.
///
/// Signals are never dropped while the consumer keeps up; a burst larger than the buffer drops the oldest or the
/// newest (as chosen) and counts them in ``DBusSignalStream/droppedCount``. The default keeps the newest 16,384
/// (over a second of a 10,000 signals/s flood): a consumer mirroring state sees the latest values and, seeing a
/// non-zero drop count, can re-read state with `GetAll`/`GetManagedObjects`.
public enum SignalBuffering: Sendable, Hashable {
    /// Keep the newest `n` signals, dropping older ones.
    case newest(Int)
    /// Keep the oldest `n` signals, dropping newer ones.
    case oldest(Int)
    /// Never drop; memory grows with the backlog (only for consumers known to keep up).
    case unbounded

    /// `.newest(16_384)`.
    public static let `default` = SignalBuffering.newest(16_384)

    var policy: AsyncStream<DBusMessage>.Continuation.BufferingPolicy {
        switch self {
        case .newest(let n): .bufferingNewest(max(1, n))
        case .oldest(let n): .bufferingOldest(max(1, n))
        case .unbounded: .unbounded
        }
    }
}

/// The signals matching one ``MatchRule``, in arrival order.
///
/// The stream ends when the connection closes or ``finish()`` is called. When it ends, or when the consuming task is
/// cancelled, or when the stream and its iterator are released, the rule is removed from the bus (`RemoveMatch`).
public struct DBusSignalStream: AsyncSequence, Sendable {
    /// Each element is a signal message; decode its body with ``DBusMessage/decode(_:)``.
    public typealias Element = DBusMessage

    private let stream: AsyncStream<DBusMessage>
    private let continuation: AsyncStream<DBusMessage>.Continuation
    private let drops: DropCounter

    init(stream: AsyncStream<DBusMessage>, continuation: AsyncStream<DBusMessage>.Continuation, drops: DropCounter) {
        self.stream = stream
        self.continuation = continuation
        self.drops = drops
    }

    /// How many signals were dropped because the buffer was full (see ``SignalBuffering``).
    public var droppedCount: Int { drops.value }

    /// Ends the stream and removes its match rule.
    public func finish() { continuation.finish() }

    /// An iterator over the signals.
    public func makeAsyncIterator() -> AsyncStream<DBusMessage>.Iterator { stream.makeAsyncIterator() }
}

extension DBusConnection {
    /// Subscribes to the signals matching `rule`.
    ///
    /// The rule is active on the bus (its `AddMatch` answered) before this returns, so every matching signal sent
    /// afterwards reaches the stream. Signals are also matched locally, so overlapping subscriptions each get exactly
    /// their own. See ``SignalBuffering`` for what happens when the consumer is slow.
    public func signals(_ rule: MatchRule, buffering: SignalBuffering = .default) async throws -> DBusSignalStream {
        let trackedName = rule.sender.flatMap { MatchRule.isTrackedName($0) ? $0 : nil }
        if let trackedName { try await trackOwner(of: trackedName) }
        let (stream, continuation) = AsyncStream.makeStream(of: DBusMessage.self, bufferingPolicy: buffering.policy)
        let drops = DropCounter()
        let router = core.signals
        let id = router.makeID()
        let ruleText = rule.ruleString
        continuation.onTermination = { [weak self] _ in
            router.remove(id)
            guard let self else { return }
            try? self.callNoReply(
                destination: BusNames.bus, path: BusNames.busPath, interface: BusNames.bus, member: "RemoveMatch",
                arguments: [.string(ruleText)])
            if let trackedName { self.untrackOwner(of: trackedName) }
        }
        guard router.add(id, SignalRouter.Subscription(rule: rule, continuation: continuation, drops: drops)) else {
            continuation.finish()
            throw DBusError.disconnected()
        }
        do {
            _ = try await callBus("AddMatch", [.string(ruleText)])
        } catch {
            continuation.finish()
            throw error
        }
        return DBusSignalStream(stream: stream, continuation: continuation, drops: drops)
    }

    private static func ownerRule(_ name: String) -> MatchRule {
        MatchRule(
            sender: BusNames.bus, interface: BusNames.bus, member: "NameOwnerChanged", path: BusNames.busPath,
            arguments: [0: name])
    }

    /// Starts following the owner of `name` (for local sender matching): subscribe to its `NameOwnerChanged`,
    /// then ask for its current owner.
    func trackOwner(of name: String) async throws {
        core.signals.retainOwner(name)
        do {
            _ = try await callBus("AddMatch", [.string(DBusConnection.ownerRule(name).ruleString)])
            core.signals.setInitialOwner(name, try await getNameOwner(name))
        } catch {
            untrackOwner(of: name)
            throw error
        }
    }

    func untrackOwner(of name: String) {
        core.signals.releaseOwner(name)
        try? callNoReply(
            destination: BusNames.bus, path: BusNames.busPath, interface: BusNames.bus, member: "RemoveMatch",
            arguments: [.string(DBusConnection.ownerRule(name).ruleString)])
    }
}
