internal import CDBus

/// The one thin layer over libdbus-1 (with `LoopHooks.swift`, `MessageWriter.swift` and `MessageReader.swift`, the
/// only files that import `CDBus`).
///
/// It turns libdbus's `DBusError` out-parameters and NULL returns into thrown Swift errors (``withError(_:)`` is the
/// one error helper), owns reference counts (every `OpaquePointer` returned here is owned by the caller, who pairs
/// it with `unrefMessage` / `closeAndUnref`), and validates names before libdbus sees them: libdbus aborts the
/// process on invalid arguments, so nothing unchecked reaches it.
enum LibDBus {
    /// Message type codes (`DBUS_MESSAGE_TYPE_*`).
    static let messageTypeMethodCall: Int32 = 1
    static let messageTypeMethodReturn: Int32 = 2
    static let messageTypeError: Int32 = 3
    static let messageTypeSignal: Int32 = 4

    /// Watch flags (`DBUS_WATCH_*`).
    static let watchReadable: UInt32 = 1
    static let watchWritable: UInt32 = 2
    static let watchError: UInt32 = 4
    static let watchHangup: UInt32 = 8

    private static let threadsReady: Bool = dbus_threads_init_default() != 0

    /// Calls `dbus_threads_init_default()` once per process.
    static func initialiseThreads() throws(DBusError) {
        guard threadsReady else { throw DBusError(.noMemory, "dbus_threads_init_default failed") }
    }

    /// Runs `body` with an initialised `DBusError`; throws it as a Swift ``DBusError`` if libdbus set it.
    static func withError<T>(_ body: (UnsafeMutablePointer<CDBus.DBusError>) -> T) throws(DBusError) -> T {
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        let result = withUnsafeMutablePointer(to: &error) { body($0) }
        if dbus_error_is_set(&error) != 0 {
            let name = error.name.map { String(cString: $0) } ?? DBusError.Name.failed.rawValue
            let message = error.message.map { String(cString: $0) } ?? ""
            dbus_error_free(&error)
            throw DBusError(DBusError.Name(rawValue: name), message)
        }
        return result
    }

    // MARK: Connections (owner thread only, except where noted)

    /// Which connection to open.
    enum Target: Sendable {
        case system
        case session
        case address(String, register: Bool)
    }

    /// Opens a private connection and registers it on the bus (blocking: runs on the connection's own thread
    /// before its loop starts). Returns the connection with `exit_on_disconnect` off.
    static func open(_ target: Target) throws(DBusError) -> OpaquePointer {
        let connection: OpaquePointer?
        switch target {
        case .system: connection = try withError { dbus_bus_get_private(DBUS_BUS_SYSTEM, $0) }
        case .session: connection = try withError { dbus_bus_get_private(DBUS_BUS_SESSION, $0) }
        case .address(let address, let register):
            connection = try withError { dbus_connection_open_private(address, $0) }
            if let connection {
                do {
                    if register {
                        _ = try withError { dbus_bus_register(connection, $0) }
                    } else {
                        try authenticate(connection)
                    }
                } catch {
                    closeAndUnref(connection)
                    throw error
                }
            }
        }
        guard let connection else { throw DBusError(.noMemory, "libdbus returned no connection") }
        dbus_connection_set_exit_on_disconnect(connection, 0)
        return connection
    }

    /// Completes the authentication of a connection opened without registering on a bus (blocking, like the
    /// registration), so that the socket holds nothing but messages when the driver takes reading over.
    private static func authenticate(
        _ connection: OpaquePointer, within timeout: Duration = .seconds(25)
    )
        throws(DBusError)
    {
        let deadline = ContinuousClock.now + timeout
        while dbus_connection_get_is_authenticated(connection) == 0 {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard dbus_connection_get_is_connected(connection) != 0 else {
                throw DBusError(.authFailed, "the peer closed the connection while authenticating")
            }
            guard remaining > .zero else {
                throw DBusError(.timedOut, "authentication did not complete within \(timeout)")
            }
            let milliseconds =
                remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000
            _ = dbus_connection_read_write(connection, Int32(clamping: max(1, milliseconds)))
        }
    }

    static func uniqueName(_ connection: OpaquePointer) -> String? {
        dbus_bus_get_unique_name(connection).map { String(cString: $0) }
    }

    static func canPassUnixFDs(_ connection: OpaquePointer) -> Bool {
        dbus_connection_can_send_type(connection, Int32(UInt8(ascii: "h"))) != 0
    }

    /// The connection's socket, or nil for a transport without one.
    static func socketFD(_ connection: OpaquePointer) -> Int32? {
        var fd: Int32 = -1
        return dbus_connection_get_socket(connection, &fd) != 0 && fd >= 0 ? fd : nil
    }

    static func isConnected(_ connection: OpaquePointer) -> Bool {
        dbus_connection_get_is_connected(connection) != 0
    }

    static func closeAndUnref(_ connection: OpaquePointer) {
        dbus_connection_close(connection)
        dbus_connection_unref(connection)
    }

    /// Queues `message` and writes as much as the socket takes without blocking; returns the serial, or `nil` when
    /// libdbus refused (out of memory, or file descriptors on a connection that cannot pass them).
    static func send(_ connection: OpaquePointer, _ message: OpaquePointer) -> UInt32? {
        var serial: UInt32 = 0
        return dbus_connection_send(connection, message, &serial) != 0 ? serial : nil
    }

    /// Dispatches one incoming message to the filter; returns whether more are queued.
    static func dispatchOne(_ connection: OpaquePointer) -> Bool {
        dbus_connection_dispatch(connection) == DBUS_DISPATCH_DATA_REMAINS
    }

    static func hasMessagesToSend(_ connection: OpaquePointer) -> Bool {
        dbus_connection_has_messages_to_send(connection) != 0
    }

    // MARK: Watches and timeouts (called by the owner thread with pointers libdbus handed to `LoopHooks`)

    static func watchFD(_ watch: OpaquePointer) -> Int32 { dbus_watch_get_unix_fd(watch) }
    static func watchFlags(_ watch: OpaquePointer) -> UInt32 { dbus_watch_get_flags(watch) }
    static func watchEnabled(_ watch: OpaquePointer) -> Bool { dbus_watch_get_enabled(watch) != 0 }
    static func handleWatch(_ watch: OpaquePointer, _ flags: UInt32) { _ = dbus_watch_handle(watch, flags) }
    static func timeoutInterval(_ timeout: OpaquePointer) -> Int32 { dbus_timeout_get_interval(timeout) }
    static func timeoutEnabled(_ timeout: OpaquePointer) -> Bool { dbus_timeout_get_enabled(timeout) != 0 }
    static func handleTimeout(_ timeout: OpaquePointer) { _ = dbus_timeout_handle(timeout) }

    // MARK: Messages

    static func newMethodCall(
        destination: String?, path: String, interface: String?, member: String
    )
        throws(DBusMarshalError) -> OpaquePointer
    {
        guard let message = dbus_message_new_method_call(destination, path, interface, member) else {
            throw .outOfMemory
        }
        return message
    }

    static func newSignal(path: String, interface: String, member: String) throws(DBusMarshalError) -> OpaquePointer {
        guard let message = dbus_message_new_signal(path, interface, member) else { throw .outOfMemory }
        return message
    }

    /// A method return answering the call with serial `replySerial` from `destination`, as
    /// `dbus_message_new_method_return` makes one (no reply expected to it).
    static func newMethodReturn(replySerial: UInt32, destination: String?) throws(DBusMarshalError) -> OpaquePointer {
        try newReply(DBUS_MESSAGE_TYPE_METHOD_RETURN, replySerial: replySerial, destination: destination)
    }

    /// An error reply named `name` (a valid error name) answering the call with serial `replySerial`; its text is
    /// for the caller to append.
    static func newError(
        replySerial: UInt32, destination: String?, name: String
    ) throws(DBusMarshalError) -> OpaquePointer {
        let message = try newReply(DBUS_MESSAGE_TYPE_ERROR, replySerial: replySerial, destination: destination)
        guard dbus_message_set_error_name(message, name) != 0 else {
            dbus_message_unref(message)
            throw .outOfMemory
        }
        return message
    }

    private static func newReply(
        _ type: Int32, replySerial: UInt32, destination: String?
    ) throws(DBusMarshalError) -> OpaquePointer {
        guard let message = dbus_message_new(type) else { throw .outOfMemory }
        dbus_message_set_no_reply(message, 1)
        guard dbus_message_set_reply_serial(message, replySerial) != 0,
            destination.map({ dbus_message_set_destination(message, $0) != 0 }) ?? true
        else {
            dbus_message_unref(message)
            throw .outOfMemory
        }
        return message
    }

    static func refMessage(_ message: OpaquePointer) { _ = dbus_message_ref(message) }
    static func unrefMessage(_ message: OpaquePointer) { dbus_message_unref(message) }

    static func setNoReply(_ message: OpaquePointer, _ noReply: Bool) {
        dbus_message_set_no_reply(message, noReply ? 1 : 0)
    }

    static func setDestination(_ message: OpaquePointer, _ destination: String) -> Bool {
        dbus_message_set_destination(message, destination) != 0
    }

    static func serial(_ message: OpaquePointer) -> UInt32 { dbus_message_get_serial(message) }

    static func containsUnixFDs(_ message: OpaquePointer) -> Bool { dbus_message_contains_unix_fds(message) != 0 }

    /// Reads a whole message in its wire form (`dbus_message_demarshal`), which libdbus validates as it would a
    /// message from a socket. Throws libdbus's reason for anything else, including a message that declares Unix
    /// file descriptors (a byte string cannot carry them).
    static func demarshal(_ bytes: [UInt8]) throws(DBusMarshalError) -> OpaquePointer {
        guard bytes.count <= Int(Int32.max) else { throw .invalidMessage(reason: "\(bytes.count) bytes is too long") }
        do throws(DBusError) {
            let message = try withError { error in
                bytes.withUnsafeBufferPointer { buffer in
                    buffer.withMemoryRebound(to: CChar.self) {
                        dbus_message_demarshal($0.baseAddress, Int32($0.count), error)
                    }
                }
            }
            guard let message else { throw DBusError(.noMemory, "dbus_message_demarshal failed") }
            return message
        } catch {
            throw error.name == .noMemory ? .outOfMemory : .invalidMessage(reason: error.message)
        }
    }

    /// The wire form of a message (`dbus_message_marshal`). A message not yet sent (serial 0, which the wire form
    /// does not allow) is marshalled as a copy with serial `serial`, so the message itself stays sendable.
    static func marshal(_ message: OpaquePointer, serial: UInt32) throws(DBusMarshalError) -> [UInt8] {
        var source = message
        if dbus_message_get_serial(message) == 0 {
            guard let copy = dbus_message_copy(message) else { throw .outOfMemory }
            dbus_message_set_serial(copy, serial)
            source = copy
        }
        defer { if source != message { dbus_message_unref(source) } }
        var data: UnsafeMutablePointer<CChar>? = nil
        var length: Int32 = 0
        guard dbus_message_marshal(source, &data, &length) != 0, let data else { throw .outOfMemory }
        defer { dbus_free(data) }
        return UnsafeRawBufferPointer(start: data, count: Int(length)).map { $0 }
    }

    /// The header fields of a message, copied into Swift (the layout fields of a ``WireHeader`` stay unset).
    static func headers(_ message: OpaquePointer) -> WireHeader {
        func text(_ pointer: UnsafePointer<CChar>?) -> String? { pointer.map { String(cString: $0) } }
        var header = WireHeader(
            type: UInt8(truncatingIfNeeded: dbus_message_get_type(message)),
            flags: dbus_message_get_no_reply(message) != 0 ? WireHeader.noReplyExpected : 0,
            serial: dbus_message_get_serial(message))
        header.replySerial = dbus_message_get_reply_serial(message)
        header.path = text(dbus_message_get_path(message))
        header.interface = dbus_message_get_interface(message).map { DBusNameTable.standard.string($0) }
        header.member = dbus_message_get_member(message).map { DBusNameTable.standard.string($0) }
        header.errorName = text(dbus_message_get_error_name(message))
        header.sender = text(dbus_message_get_sender(message))
        header.destination = text(dbus_message_get_destination(message))
        header.signature = text(dbus_message_get_signature(message)) ?? ""
        return header
    }

    // MARK: Validation (libdbus's own rules, without its abort-on-bad-argument checks)

    /// The kinds of names D-Bus distinguishes.
    enum NameKind: String {
        case bus
        case interface
        case member
        case error
    }

    /// Throws ``DBusMarshalError/invalidName(_:kind:reason:)`` unless `text` is a valid name of `kind`.
    static func validate(_ text: String, as kind: NameKind) throws(DBusMarshalError) {
        guard !text.utf8.contains(0) else { throw .invalidName(text, kind: kind.rawValue, reason: "contains NUL") }
        do throws(DBusError) {
            let valid = try withError { error -> Bool in
                switch kind {
                case .bus: dbus_validate_bus_name(text, error) != 0
                case .interface: dbus_validate_interface(text, error) != 0
                case .member: dbus_validate_member(text, error) != 0
                case .error: dbus_validate_error_name(text, error) != 0
                }
            }
            if !valid { throw DBusError(.invalidArgs, "rejected") }
        } catch {
            throw .invalidName(text, kind: kind.rawValue, reason: error.message)
        }
    }
}
