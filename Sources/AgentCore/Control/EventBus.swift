import ControlProtocol
import JSON
import Synchronization

/// Something that happened in the agent, for subscribers of the control API.
public struct AgentEvent: Sendable, Hashable {
    /// The kind, which subscribers filter on.
    public var kind: EventKind
    /// The event's data (documented per kind in docs/control-api.md).
    public var data: JSON

    /// An event.
    public init(kind: EventKind, data: JSON) {
        self.kind = kind
        self.data = data
    }
}

/// Where the agent publishes events. Publishing never blocks: each observer
/// must hand the event off (the control server queues it onto its loop).
public final class EventBus: Sendable {
    /// A token that removes an observer.
    public struct Token: Sendable, Hashable {
        fileprivate let id: UInt64
    }

    private struct Observer {
        var wants: (@Sendable (EventKind) -> Bool)?
        var receive: @Sendable (AgentEvent) -> Void
    }

    private struct State {
        var nextID: UInt64 = 0
        var observers: [UInt64: Observer] = [:]
    }

    private let state = Mutex(State())

    /// An empty bus.
    public init() {}

    /// Adds an observer called (on the publishing thread) for every event
    /// whose kind `wants` accepts (every event without `wants`).
    @discardableResult
    public func observe(
        wants: (@Sendable (EventKind) -> Bool)? = nil, _ observer: @escaping @Sendable (AgentEvent) -> Void
    ) -> Token {
        state.withLock { state in
            state.nextID += 1
            state.observers[state.nextID] = Observer(wants: wants, receive: observer)
            return Token(id: state.nextID)
        }
    }

    /// Whether any observer wants events of `kind` now.
    public func isObserved(_ kind: EventKind) -> Bool {
        let observers = state.withLock { Array($0.observers.values) }
        return observers.contains { $0.wants?(kind) ?? true }
    }

    /// Removes an observer.
    public func remove(_ token: Token) {
        _ = state.withLock { $0.observers.removeValue(forKey: token.id) }
    }

    /// Publishes an event to every observer that wants its kind.
    public func publish(_ event: AgentEvent) {
        let observers = state.withLock { Array($0.observers.values) }
        for observer in observers where observer.wants?(event.kind) ?? true { observer.receive(event) }
    }

    /// Publishes an event of `kind` with `data`.
    public func publish(_ kind: EventKind, _ data: JSON) {
        publish(AgentEvent(kind: kind, data: data))
    }

    /// Publishes an event of `kind` whose data `makeData` builds only if
    /// someone wants that kind (frequent events nobody listens to cost nothing).
    public func publish(_ kind: EventKind, _ makeData: () -> JSON) {
        guard isObserved(kind) else { return }
        publish(AgentEvent(kind: kind, data: makeData()))
    }
}
