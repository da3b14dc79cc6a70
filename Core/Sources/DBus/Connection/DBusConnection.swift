/// A private connection to a D-Bus bus (or peer), owned by a dedicated thread.
///
/// Open one with ``system()``, ``session()`` or ``connect(address:registerOnBus:readInterval:)``. All methods may be used from
/// any task: they hand work to the connection's thread and never block. Method calls are `async` and resolve exactly
/// once, with the reply, an error reply (thrown as ``DBusError``), a timeout (``DBusError/Name/noReply``), a
/// cancellation (`CancellationError`) or the connection's loss (``DBusError/Name/disconnected``).
///
/// A connection lives until ``close()`` is called or the bus goes away; it is not closed when this object is
/// released (handlers and streams refer to it). Exported objects are managed through ``objects``.
public final class DBusConnection: Sendable {
    let core: ConnectionCore

    /// The unique name the bus assigned (`:1.42`), or `nil` for a peer-to-peer connection.
    public let uniqueName: String?
    /// Whether Unix file descriptors can be passed on this connection.
    public let canPassUnixFDs: Bool

    private init(core: ConnectionCore, info: ConnectionInfo) {
        self.core = core
        uniqueName = info.uniqueName
        canPassUnixFDs = info.canPassUnixFDs
    }

    /// Connects to the system bus (at `DBUS_SYSTEM_BUS_ADDRESS` if set, else the standard socket), reading it paced
    /// by `readInterval` (see ``connect(address:registerOnBus:readInterval:)``).
    public static func system(readInterval: Duration = defaultReadInterval) async throws -> DBusConnection {
        try await open(.system, readInterval: readInterval)
    }

    /// Connects to the session bus (at `DBUS_SESSION_BUS_ADDRESS`).
    public static func session() async throws -> DBusConnection { try await open(.session) }

    /// Connects to `address` (e.g. `unix:path=/run/dbus/system_bus_socket`); with `registerOnBus` (the default)
    /// it says `Hello` to the bus and gets a unique name, without it the peer is not a bus.
    ///
    /// `readInterval` paces reading during a flood of signals: after a read that brought only signals and emptied
    /// the socket, what arrives within this interval is read when it is over, in one read (the socket holds it
    /// meanwhile), instead of a few messages per wake-up of the connection's thread, which sleeps out the rest of
    /// the interval. What arrives then (a signal, a call, the end of the connection), and what is sent then, waits
    /// at most this long; never while a reply to one of this connection's calls is awaited. ``Duration/zero``
    /// reads every readiness at once.
    ///
    /// Opening uses libdbus's own (blocking, 25 s at most) authentication and `Hello` on the new connection's thread;
    /// the awaiting task is suspended meanwhile, not blocked, and cannot cancel it.
    public static func connect(
        address: String, registerOnBus: Bool = true, readInterval: Duration = defaultReadInterval
    ) async throws -> DBusConnection {
        guard !address.utf8.contains(0) else { throw DBusError(.badAddress, "address contains NUL") }
        return try await open(.address(address, register: registerOnBus), readInterval: readInterval)
    }

    /// The read interval of every connection opened without one: 500 µs, as far apart as the ends of runs that
    /// signal handlers hear under load, so what handlers deliver waits no longer than it did. At 40,000 signals a
    /// second a read then takes about 30 messages instead of about 2.
    public static let defaultReadInterval = Duration.microseconds(500)

    /// The shortest time between two reads during a flood of signals, as connected (``connect(address:registerOnBus:readInterval:)``).
    public var readInterval: Duration { core.readInterval }

    /// How the connection's socket has been read so far.
    public struct ReadStatistics: Hashable, Sendable {
        /// Reads of the socket.
        public var reads: Int
        /// Times the socket was readable within the read interval of a read that brought only signals, and was read
        /// when the interval was over.
        public var paced: Int
    }

    /// How the connection's socket has been read so far (see ``connect(address:registerOnBus:readInterval:)``).
    public var readStatistics: ReadStatistics {
        ReadStatistics(
            reads: core.reads.load(ordering: .relaxed), paced: core.pacedReadinesses.load(ordering: .relaxed))
    }

    private static func open(
        _ target: LibDBus.Target, readInterval: Duration = defaultReadInterval
    ) async throws -> DBusConnection {
        try LibDBus.initialiseThreads()
        let core = try ConnectionCore(readInterval: max(readInterval, .zero))
        let info = try await withCheckedThrowingContinuation { continuation in
            OwnerThread.spawn(core: core, target: target, ready: continuation)
        }
        let connection = DBusConnection(core: core, info: info)
        core.objects.startServing(connection)
        return connection
    }

    /// The objects this connection exports.
    public var objects: ObjectServer { core.objects }

    /// Whether the connection has been closed or lost.
    public var isClosed: Bool { core.isClosed }

    /// Why the connection stopped reading, once it has: the peer closed it, a read failed, or the peer sent bytes
    /// that are not D-Bus (the check that failed). Nil while reading, and after ``close()``.
    public var closeReason: String? { core.closeReason }

    /// Returns once the connection is closed, by ``close()`` or because it was lost (then ``closeReason`` says
    /// why). Any number of tasks may wait; each is woken once.
    public func closed() async { await core.waitUntilClosed() }

    /// Closes the connection: messages already queued get a short grace period to be written, pending calls fail
    /// with ``DBusError/Name/disconnected``, signal streams end. Returns once the connection is released.
    public func close() async {
        _ = core.mailbox.post(.close)
        await core.waitUntilClosed()
    }

    /// Returns once everything queued so far has been written to the socket (or the connection is gone).
    public func flush() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            whenWritten { continuation.resume() }
        }
    }

    /// Runs `action` once everything queued so far has been written to the socket (or the connection is gone):
    /// ``flush()`` without a task, for a sender that only needs to hear it. `action` runs on the connection's owner
    /// thread (at once, on the caller's, when the connection is already closed), so it must not block.
    public func whenWritten(_ action: @escaping @Sendable () -> Void) {
        if !core.mailbox.post(.flush(action)) { action() }
    }

    // MARK: Calls

    /// Calls a method and waits for its reply.
    ///
    /// - Throws: ``DBusError`` for an error reply, ``DBusError/Name/noReply`` when `timeout` passes,
    ///   ``DBusError/Name/disconnected`` when the connection closes first, `CancellationError` when the calling task
    ///   is cancelled, ``DBusMarshalError`` for invalid names or arguments.
    public func call(
        destination: String?, path: ObjectPath, interface: String?, member: String, arguments: [DBusValue] = [],
        timeout: Duration = .seconds(25)
    ) async throws -> DBusMessage {
        let message = try DBusMessage.methodCall(
            destination: destination, path: path, interface: interface, member: member, arguments: arguments)
        return try await call(message, timeout: timeout)
    }

    /// Sends a method call built with ``DBusMessage/methodCall(destination:path:interface:member:arguments:noReplyExpected:)``
    /// and waits for its reply (see the other `call` for what it throws).
    public func call(_ message: DBusMessage, timeout: Duration = .seconds(25)) async throws -> DBusMessage {
        guard message.kind == .methodCall else { throw DBusError(.invalidArgs, "only method calls can be called") }
        guard !message.isReceived else { throw DBusMessage.receivedMessageError }
        if !canPassUnixFDs, message.containsUnixFDs { throw DBusMarshalError.fileDescriptorsUnsupported }
        let id = core.makeCallID()
        let cancellation = CancellationFlag()
        let deadline = ContinuousClock.now.advanced(by: timeout)
        let mailbox = core.mailbox
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let request = CallRequest(
                    id: id, message: message, timeout: timeout, deadline: deadline, cancellation: cancellation,
                    continuation: continuation)
                if !mailbox.post(.call(request)) { continuation.resume(throwing: DBusError.disconnected()) }
            }
        } onCancel: {
            cancellation.cancel()
            _ = mailbox.post(.cancel(id))
        }
    }

    /// Sends a message without waiting for anything (a signal, or a method call that expects no reply).
    public func send(_ message: DBusMessage) throws {
        guard !message.isReceived else { throw DBusMessage.receivedMessageError }
        if !canPassUnixFDs, message.containsUnixFDs { throw DBusMarshalError.fileDescriptorsUnsupported }
        guard core.mailbox.post(.send(message)) else { throw DBusError.disconnected() }
    }

    /// Calls a method with the no-reply-expected flag: the peer sends no reply and nothing waits for one.
    public func callNoReply(
        destination: String?, path: ObjectPath, interface: String?, member: String, arguments: [DBusValue] = []
    ) throws {
        try send(
            DBusMessage.methodCall(
                destination: destination, path: path, interface: interface, member: member, arguments: arguments,
                noReplyExpected: true))
    }

    /// Emits a signal from `path` (broadcast, or unicast to `destination`).
    public func emitSignal(
        path: ObjectPath, interface: String, member: String, arguments: [DBusValue] = [], destination: String? = nil
    ) throws {
        try send(
            DBusMessage.signal(
                path: path, interface: interface, member: member, arguments: arguments, destination: destination))
    }

    /// Calls a method of the bus itself (`org.freedesktop.DBus`).
    func callBus(
        _ member: String, _ arguments: [DBusValue] = [], timeout: Duration = .seconds(25)
    ) async throws
        -> DBusMessage
    {
        try await call(
            destination: BusNames.bus, path: BusNames.busPath, interface: BusNames.bus, member: member,
            arguments: arguments, timeout: timeout)
    }
}
