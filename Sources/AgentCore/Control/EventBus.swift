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

    private struct State {
        var nextID: UInt64 = 0
        var observers: [UInt64: @Sendable (AgentEvent) -> Void] = [:]
    }

    private let state = Mutex(State())

    /// An empty bus.
    public init() {}

    /// Adds an observer called (on the publishing thread) for every event.
    @discardableResult
    public func observe(_ observer: @escaping @Sendable (AgentEvent) -> Void) -> Token {
        state.withLock { state in
            state.nextID += 1
            state.observers[state.nextID] = observer
            return Token(id: state.nextID)
        }
    }

    /// Removes an observer.
    public func remove(_ token: Token) {
        _ = state.withLock { $0.observers.removeValue(forKey: token.id) }
    }

    /// Publishes an event to every observer.
    public func publish(_ event: AgentEvent) {
        let observers = state.withLock { Array($0.observers.values) }
        for observer in observers { observer(event) }
    }

    /// Publishes an event of `kind` with `data`.
    public func publish(_ kind: EventKind, _ data: JSON) {
        publish(AgentEvent(kind: kind, data: data))
    }
}
