import Synchronization

/// The per-call state that puts a call's signals after its reply.
///
/// While a method handler or property setter runs, the ``ObjectServer`` that serves the call holds back the signals
/// it would emit (`PropertiesChanged`, `InterfacesAdded`, `InterfacesRemoved`): they are kept here, in order, and
/// sent right after the reply, on the same outgoing queue, so a client always receives the reply first, as from
/// bluetoothd. Several `PropertiesChanged` for one object and interface fold into one signal (at the place of the
/// first), carrying the values current when it is sent, as gdbus does. Work registered with
/// ``DBusMethodCall/afterReply(_:)`` runs after that.
///
/// The context is found through a task-local value, so it follows the handler into the tasks it awaits and the
/// child tasks it starts; once the reply is sent it is closed and later emissions go out at once.
final class CallContext: Sendable {
    /// A held-back signal.
    enum Deferred: Sendable {
        /// A signal built when it was emitted.
        case message(DBusMessage)
        /// `PropertiesChanged` for these properties, built from the values current when it is sent.
        case propertiesChanged(path: ObjectPath, interface: String, names: [String])
    }

    private struct State {
        var open = true
        var deferred: [Deferred] = []
        var afterReply: [@Sendable () async -> Void] = []
    }

    /// The context of the call the current task is handling, if any.
    @TaskLocal static var current: CallContext?

    /// The server whose emissions this context holds back (emissions of other servers are not held).
    let server: ObjectIdentifier
    private let state = Mutex(State())

    init(server: ObjectServer) { self.server = ObjectIdentifier(server) }

    /// Holds `item` back if the context is still open; returns `false` when the caller should send it now.
    func hold(_ item: Deferred) -> Bool {
        state.withLock { state in
            guard state.open else { return false }
            if case .propertiesChanged(let path, let interface, let names) = item,
                let index = state.deferred.firstIndex(where: {
                    if case .propertiesChanged(path, interface, _) = $0 { true } else { false }
                }),
                case .propertiesChanged(_, _, var merged) = state.deferred[index]
            {
                for name in names where !merged.contains(name) { merged.append(name) }
                state.deferred[index] = .propertiesChanged(path: path, interface: interface, names: merged)
            } else {
                state.deferred.append(item)
            }
            return true
        }
    }

    /// Takes what was held back so far; with `close`, later emissions are no longer held.
    func take(close: Bool) -> [Deferred] {
        state.withLock { state in
            if close { state.open = false }
            defer { state.deferred = [] }
            return state.deferred
        }
    }

    /// Registers work for after the reply (or runs it at once, detached, if the reply is already sent).
    func addAfterReply(_ work: @escaping @Sendable () async -> Void) {
        let late = state.withLock { state -> Bool in
            guard state.open else { return true }
            state.afterReply.append(work)
            return false
        }
        if late { Task { await work() } }
    }

    /// Takes the after-reply work, in registration order.
    func takeAfterReply() -> [@Sendable () async -> Void] {
        state.withLock { state in
            defer { state.afterReply = [] }
            return state.afterReply
        }
    }
}
