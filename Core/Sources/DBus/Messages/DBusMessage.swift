import Synchronization

/// One D-Bus message: a method call, a method return, an error reply or a signal.
///
/// Header fields are read once into Swift properties; the body is decoded on demand with ``arguments()``,
/// ``decode(_:)`` or ``withBodyReader(_:)``, so a message can be read from any task. A received message keeps its
/// bytes as they came off the socket (with the file descriptors that came with them), immutable; a message built
/// here is a libdbus message, used under a lock. Incoming messages reach you as replies to
/// ``DBusConnection/call(_:timeout:)``, as elements of signal streams and as the ``DBusMethodCall/message`` of
/// calls to exported objects.
public final class DBusMessage: Sendable, CustomStringConvertible {
    /// The four D-Bus message types.
    public enum Kind: Sendable, Hashable {
        /// A method call.
        case methodCall
        /// A successful reply.
        case methodReturn
        /// An error reply.
        case error
        /// A signal.
        case signal
    }

    /// The message type.
    public let kind: Kind
    /// The serial number (0 for a message not yet sent).
    public let serial: UInt32
    /// For replies, the serial of the call answered (else 0).
    public let replySerial: UInt32
    /// The object path (calls and signals).
    public let path: ObjectPath?
    /// The interface (signals always; calls optionally).
    public let interface: String?
    /// The method or signal name.
    public let member: String?
    /// The error name (error replies).
    public let errorName: String?
    /// The unique name of the sender, as stamped by the bus.
    public let sender: String?
    /// The destination name, if any.
    public let destination: String?
    /// The signature of the body.
    public let signature: DBusSignature
    /// Whether the sender of this method call asked for no reply.
    public let noReplyExpected: Bool

    /// The libdbus message of a message built here (or read by libdbus). libdbus messages are not safe for
    /// concurrent use, so every access goes through ``withRaw(_:)``, which holds ``lock``; the pointer itself never
    /// changes.
    private nonisolated(unsafe) let raw: OpaquePointer?
    private let lock = Mutex(())
    /// The bytes of a message read from a socket in wire form.
    private let wire: WireMessage?

    /// Adopts one reference to a libdbus message.
    convenience init(adopting raw: OpaquePointer) {
        self.init(header: LibDBus.headers(raw), raw: raw, wire: nil)
    }

    /// Wraps a message read in wire form, with its header (already checked).
    convenience init(wire: WireMessage, header: WireHeader) {
        self.init(header: header, raw: nil, wire: wire)
    }

    private init(header: WireHeader, raw: OpaquePointer?, wire: WireMessage?) {
        kind =
            switch Int32(header.type) {
            case LibDBus.messageTypeMethodCall: .methodCall
            case LibDBus.messageTypeMethodReturn: .methodReturn
            case LibDBus.messageTypeError: .error
            default: .signal
            }
        serial = header.serial
        replySerial = header.replySerial
        path = header.path.map(ObjectPath.init(trusted:))
        interface = header.interface
        member = header.member
        errorName = header.errorName
        sender = header.sender
        destination = header.destination
        signature = DBusSignature(trusted: header.signature)
        noReplyExpected = header.flags & WireHeader.noReplyExpected != 0
        self.raw = raw
        self.wire = wire
    }

    deinit {
        if let raw { LibDBus.unrefMessage(raw) }
    }

    /// Runs `body` with exclusive access to the libdbus message; nil for a message read in wire form, which has
    /// none (a received message is not sent again).
    func withRaw<T: Sendable, E: Error>(_ body: (OpaquePointer) throws(E) -> T) throws(E) -> T? {
        guard let raw else { return nil }
        return try lock.withLock { (_: inout Void) throws(E) -> T in try body(raw) }
    }

    /// Reads a message from its wire form (the D-Bus specification's marshalling) as a connection reads one from
    /// its socket: the header is checked in full, the body as it is read (``arguments()`` throws, a
    /// ``DBusBodyReader`` reads nil, where it is malformed).
    ///
    /// - Throws: ``DBusMarshalError/invalidMessage(reason:)``, for example for a truncated message, a bad header
    ///   field or one that declares Unix file descriptors (bytes cannot carry them).
    public convenience init(wireBytes: [UInt8]) throws(DBusMarshalError) {
        let (message, header) = try WireMessage.read(wireBytes)
        guard header.unixFDs == 0 else {
            throw .invalidMessage(reason: "the message declares Unix file descriptors, which bytes cannot carry")
        }
        guard (1...4).contains(header.type) else {
            throw .invalidMessage(reason: "message type \(header.type) is not one this version knows")
        }
        self.init(wire: message, header: header)
    }

    /// Reads a message from its wire form with libdbus's own reader, which validates the whole body before anyone
    /// reads it: the reference ``init(wireBytes:)`` is tested against.
    ///
    /// - Throws: ``DBusMarshalError/invalidMessage(reason:)`` with libdbus's reason.
    public convenience init(libdbusWireBytes: [UInt8]) throws(DBusMarshalError) {
        self.init(adopting: try LibDBus.demarshal(libdbusWireBytes))
    }

    /// The message in wire form, as ``init(wireBytes:)`` reads it. A message not yet sent has no serial, which the
    /// wire form requires: it is written with `serial` (the message itself is unchanged).
    public func wireBytes(serial: UInt32 = 1) throws(DBusMarshalError) -> [UInt8] {
        if let wire { return wire.bytes }
        return try withRaw { (raw) throws(DBusMarshalError) in try LibDBus.marshal(raw, serial: max(serial, 1)) } ?? []
    }

    /// Decodes the whole body.
    public func arguments() throws(DBusMarshalError) -> [DBusValue] {
        if let wire { return try wire.arguments(signature) }
        return try withRaw { (raw) throws(DBusMarshalError) in try MessageReader.read(raw, signature: signature) } ?? []
    }

    /// Runs `body` with a cursor on the first argument of the body (its ``DBusBodyReader/typeCode`` is nil for an
    /// empty body).
    public func withBodyReader<R>(_ body: (DBusBodyReader) -> R) -> R {
        if let wire { return DBusBodyReader.reading(wire, body) }
        // A message built here is read through its wire form, as a receiver would read it.
        let bytes = (try? wireBytes()) ?? []
        return DBusBodyReader.reading((try? WireMessage.read(bytes))?.0 ?? .empty, body)
    }

    /// Decodes the body into typed values: `let (name, owner) = try message.decode(String.self, String.self)`.
    /// Throws ``DBusMarshalError`` if the argument count or a type differs.
    public func decode<each T: DBusRepresentable>(
        _ types: repeat (each T).Type
    ) throws(DBusMarshalError)
        -> (repeat each T)
    {
        try arguments().decode(repeat each types)
    }

    /// For an error reply, the error it carries (name and first string argument); else `nil`.
    public var error: DBusError? {
        guard kind == .error else { return nil }
        let text = (try? arguments())?.first?.stringValue ?? ""
        return DBusError(DBusError.Name(rawValue: errorName ?? DBusError.Name.failed.rawValue), text)
    }

    /// Whether the message was read from its wire form (a received one), which is not sent again.
    var isReceived: Bool { wire != nil }

    /// The error for sending a received message: build a new one instead.
    static let receivedMessageError = DBusError(
        .invalidArgs, "a received message cannot be sent again; build a new one with the same contents")

    /// Whether the body carries Unix file descriptors.
    var containsUnixFDs: Bool {
        if let wire { return wire.layout.unixFDs > 0 }
        return withRaw { LibDBus.containsUnixFDs($0) } ?? false
    }

    /// A one-line summary: kind, names, path and signature.
    public var description: String {
        var parts = ["\(kind)"]
        if let sender { parts.append("sender=\(sender)") }
        if let destination { parts.append("destination=\(destination)") }
        if let path { parts.append("path=\(path)") }
        if let interface { parts.append("interface=\(interface)") }
        if let member { parts.append("member=\(member)") }
        if let errorName { parts.append("error=\(errorName)") }
        parts.append("signature=\"\(signature)\"")
        return "DBusMessage(" + parts.joined(separator: " ") + ")"
    }
}

extension DBusMessage {
    /// Builds a method call. Names are validated (a bad one throws ``DBusMarshalError/invalidName(_:kind:reason:)``)
    /// and every argument is type-checked while it is marshalled.
    public static func methodCall(
        destination: String?, path: ObjectPath, interface: String?, member: String, arguments: [DBusValue] = [],
        noReplyExpected: Bool = false
    ) throws(DBusMarshalError) -> DBusMessage {
        if let destination { try LibDBus.validate(destination, as: .bus) }
        if let interface { try LibDBus.validate(interface, as: .interface) }
        try LibDBus.validate(member, as: .member)
        let raw = try LibDBus.newMethodCall(
            destination: destination, path: path.rawValue, interface: interface, member: member)
        if noReplyExpected { LibDBus.setNoReply(raw, true) }
        return try filled(raw, arguments)
    }

    /// Builds a signal, optionally directed at one `destination` (unicast).
    public static func signal(
        path: ObjectPath, interface: String, member: String, arguments: [DBusValue] = [], destination: String? = nil
    ) throws(DBusMarshalError) -> DBusMessage {
        try LibDBus.validate(interface, as: .interface)
        try LibDBus.validate(member, as: .member)
        if let destination { try LibDBus.validate(destination, as: .bus) }
        let raw = try LibDBus.newSignal(path: path.rawValue, interface: interface, member: member)
        if let destination, !LibDBus.setDestination(raw, destination) {
            LibDBus.unrefMessage(raw)
            throw .outOfMemory
        }
        return try filled(raw, arguments)
    }

    /// Builds the successful reply to this method call.
    func makeReply(_ arguments: [DBusValue]) throws(DBusMarshalError) -> DBusMessage {
        try DBusMessage.filled(LibDBus.newMethodReturn(replySerial: serial, destination: sender), arguments)
    }

    /// Builds an error reply to this method call (an invalid error name becomes `Failed`).
    func makeErrorReply(_ error: DBusError) throws(DBusMarshalError) -> DBusMessage {
        var name = error.name.rawValue
        if (try? LibDBus.validate(name, as: .error)) == nil { name = DBusError.Name.failed.rawValue }
        let text = error.message.utf8.contains(0) ? String(error.message.prefix { $0 != "\0" }) : error.message
        let raw = try LibDBus.newError(replySerial: serial, destination: sender, name: name)
        return try DBusMessage.filled(raw, [.string(text)])
    }

    private static func filled(_ raw: OpaquePointer, _ arguments: [DBusValue]) throws(DBusMarshalError) -> DBusMessage {
        do {
            try MessageWriter.append(arguments, to: raw)
        } catch {
            LibDBus.unrefMessage(raw)
            throw error
        }
        return DBusMessage(adopting: raw)
    }
}
