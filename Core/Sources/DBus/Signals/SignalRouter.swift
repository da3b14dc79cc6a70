import Synchronization

/// The signal subscriptions of one connection, and the owners of the well-known names they filter on.
///
/// ``route(_:)`` runs on the owner thread for every incoming signal, in arrival order, and yields it to each
/// matching subscription's stream, or calls its handler right there on the owner thread (outside the lock).
/// ``endOfBatch()`` runs after each run of dispatched messages and tells the handlers. Subscriptions are added and
/// removed from any task.
final class SignalRouter: Sendable {
    /// A class, so routing a signal copies a reference, not the rule.
    final class Subscription: Sendable {
        /// Where matching signals go.
        enum Target: Sendable {
            /// Yielded to a stream.
            case stream(AsyncStream<DBusMessage>.Continuation, DropCounter)
            /// Handled synchronously on the owner thread; `batchEnded` after each run of messages.
            case handler(@Sendable (DBusMessage) -> Void, batchEnded: (@Sendable () -> Void)?)
        }

        let rule: MatchRule
        let target: Target

        init(rule: MatchRule, continuation: AsyncStream<DBusMessage>.Continuation, drops: DropCounter) {
            self.rule = rule
            self.target = .stream(continuation, drops)
        }

        init(rule: MatchRule, target: Target) {
            self.rule = rule
            self.target = target
        }

        /// Whether the signal in `context` is for this subscription (a method here, so the rule is read in place).
        func matches(_ context: inout SignalMatchContext) -> Bool {
            rule.matches(&context)
        }
    }

    /// A watched well-known name and its current owner.
    fileprivate struct OwnerTracking {
        let name: String
        var references: Int
        var owner: String?
        var changedBySignal: Bool
    }

    private struct State {
        /// By id, in the order added: a signal is checked against each in turn, so the list is an array.
        var subscriptions: [(id: UInt64, subscription: Subscription)] = []
        /// The watched names: a few, so a signal looks its sender's up in a list, with no hashing.
        var owners: [OwnerTracking] = []
        var finished = false
    }

    private let state = Mutex(State())
    private let nextID = Atomic<UInt64>(1)
    /// Whether a handler got a signal since the last ``endOfBatch()``.
    private let routedToHandler = Atomic<Bool>(false)

    func makeID() -> UInt64 { nextID.wrappingAdd(1, ordering: .relaxed).oldValue }

    /// Adds a subscription; `false` if the connection is already closed.
    func add(_ id: UInt64, _ subscription: Subscription) -> Bool {
        state.withLock { state in
            guard !state.finished else { return false }
            state.subscriptions.append((id, subscription))
            return true
        }
    }

    func remove(_ id: UInt64) {
        state.withLock { $0.subscriptions.removeAll { $0.id == id } }
    }

    /// Counts a subscriber that needs the owner of `name`.
    func retainOwner(_ name: String) {
        state.withLock { state in
            if let index = state.owners.firstIndex(where: { $0.name == name }) {
                state.owners[index].references += 1
            } else {
                state.owners.append(OwnerTracking(name: name, references: 1, owner: nil, changedBySignal: false))
            }
        }
    }

    func releaseOwner(_ name: String) {
        state.withLock { state in
            guard let index = state.owners.firstIndex(where: { $0.name == name }) else { return }
            state.owners[index].references -= 1
            if state.owners[index].references == 0 { state.owners.remove(at: index) }
        }
    }

    /// Records the answer of `GetNameOwner`, unless a `NameOwnerChanged` seen since is newer.
    func setInitialOwner(_ name: String, _ owner: String?) {
        state.withLock { state in
            guard let index = state.owners.firstIndex(where: { $0.name == name }),
                !state.owners[index].changedBySignal
            else { return }
            state.owners[index].owner = owner
        }
    }

    /// Delivers `message` to every matching subscription (owner thread).
    func route(_ message: DBusMessage) {
        let targets = state.withLock { state -> [Subscription] in
            var context = SignalMatchContext(message: message, owners: state.owners)
            if !state.owners.isEmpty, SignalRouter.isNameOwnerChanged(message),
                let values = context.arguments(), values.count == 3, case .string(let name) = values[0],
                case .string(let newOwner) = values[2], let index = state.owners.firstIndex(where: { $0.name == name })
            {
                state.owners[index].owner = newOwner.isEmpty ? nil : newOwner
                state.owners[index].changedBySignal = true
                context.owners = state.owners
            }
            var targets: [Subscription] = []
            for (_, subscription) in state.subscriptions where subscription.matches(&context) {
                targets.append(subscription)
            }
            return targets
        }
        for target in targets {
            switch target.target {
            case .stream(let continuation, let drops):
                if case .dropped = continuation.yield(message) { drops.increment() }
            case .handler(let handler, _):
                routedToHandler.store(true, ordering: .relaxed)
                handler(message)
            }
        }
    }

    /// A run of dispatched messages ended (owner thread): handlers that got signals in it hear so.
    func endOfBatch() {
        guard routedToHandler.exchange(false, ordering: .relaxed) else { return }
        let ends = state.withLock { state in
            state.subscriptions.compactMap { _, subscription -> (@Sendable () -> Void)? in
                if case .handler(_, let batchEnded) = subscription.target { return batchEnded }
                return nil
            }
        }
        for end in ends { end() }
    }

    /// Ends every stream (the connection closed).
    func finishAll() {
        let subscriptions = state.withLock { state in
            state.finished = true
            let all = state.subscriptions.map(\.subscription)
            state.subscriptions = []
            return all
        }
        for subscription in subscriptions {
            if case .stream(let continuation, _) = subscription.target { continuation.finish() }
        }
    }

    static func isNameOwnerChanged(_ message: DBusMessage) -> Bool {
        message.member == "NameOwnerChanged" && message.interface == BusNames.bus && message.sender == BusNames.bus
    }
}

/// Counts signals a slow consumer's buffer had to drop.
final class DropCounter: Sendable {
    private let count = Atomic<Int>(0)
    func increment() { count.wrappingAdd(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}

/// What matching one signal against the subscriptions' rules asks of it: the owner of a well-known sender name, and
/// the arguments, decoded at most once.
struct SignalMatchContext {
    /// The signal.
    let message: DBusMessage
    /// The watched names with their owners.
    fileprivate var owners: [SignalRouter.OwnerTracking]
    private var decoded: [DBusValue]??

    fileprivate init(message: DBusMessage, owners: [SignalRouter.OwnerTracking]) {
        self.message = message
        self.owners = owners
    }

    /// The current owner of the well-known `name`, as `NameOwnerChanged` and `GetNameOwner` told.
    func owner(of name: String) -> String? {
        owners.first { $0.name == name }?.owner ?? nil
    }

    /// The signal's arguments; nil when they do not decode.
    mutating func arguments() -> [DBusValue]? {
        if let decoded { return decoded }
        let values = try? message.arguments()
        decoded = .some(values)
        return values
    }
}
