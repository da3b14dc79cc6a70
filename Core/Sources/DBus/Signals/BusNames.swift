/// The reply to `RequestName`.
public enum RequestNameReply: UInt32, Sendable {
    /// `DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER`: we own the name now.
    case primaryOwner = 1
    /// `DBUS_REQUEST_NAME_REPLY_IN_QUEUE`: someone else owns it; we are queued.
    case inQueue = 2
    /// `DBUS_REQUEST_NAME_REPLY_EXISTS`: someone else owns it and we did not queue.
    case exists = 3
    /// `DBUS_REQUEST_NAME_REPLY_ALREADY_OWNER`: we owned it already.
    case alreadyOwner = 4
}

/// The reply to `ReleaseName`.
public enum ReleaseNameReply: UInt32, Sendable {
    /// `DBUS_RELEASE_NAME_REPLY_RELEASED`.
    case released = 1
    /// `DBUS_RELEASE_NAME_REPLY_NON_EXISTENT`: no one owned the name.
    case nonExistent = 2
    /// `DBUS_RELEASE_NAME_REPLY_NOT_OWNER`: someone else owns it.
    case notOwner = 3
}

/// Flags of `RequestName`.
public struct RequestNameFlags: OptionSet, Sendable, Hashable {
    /// The flag bits.
    public let rawValue: UInt32
    /// Flags from their bits.
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// `DBUS_NAME_FLAG_ALLOW_REPLACEMENT`: let a later requester with `replaceExisting` take the name.
    public static let allowReplacement = RequestNameFlags(rawValue: 1)
    /// `DBUS_NAME_FLAG_REPLACE_EXISTING`: take the name from an owner that allows replacement.
    public static let replaceExisting = RequestNameFlags(rawValue: 2)
    /// `DBUS_NAME_FLAG_DO_NOT_QUEUE`: fail with `exists` instead of queueing.
    public static let doNotQueue = RequestNameFlags(rawValue: 4)
}

/// A change of a bus name's owner (`NameOwnerChanged`); `nil` owners mean "none".
public struct NameOwnerChange: Sendable, Hashable {
    /// The name.
    public let name: String
    /// The owner before, or `nil`.
    public let oldOwner: String?
    /// The owner after, or `nil` (the name was released or its owner exited).
    public let newOwner: String?

    /// A change record.
    public init(name: String, oldOwner: String?, newOwner: String?) {
        self.name = name
        self.oldOwner = oldOwner
        self.newOwner = newOwner
    }
}

/// The bus's own name and path.
enum BusNames {
    static let bus = "org.freedesktop.DBus"
    static let busPath = ObjectPath(trusted: "/org/freedesktop/DBus")
}

extension DBusConnection {
    /// Asks the bus for a well-known name.
    public func requestName(_ name: String, flags: RequestNameFlags = [.doNotQueue]) async throws -> RequestNameReply {
        let code = try await callBus("RequestName", [.string(name), .uint32(flags.rawValue)]).decode(UInt32.self)
        guard let reply = RequestNameReply(rawValue: code) else {
            throw DBusMarshalError.typeMismatch(expected: "RequestName reply 1...4", actual: "\(code)")
        }
        return reply
    }

    /// Gives a well-known name back.
    public func releaseName(_ name: String) async throws -> ReleaseNameReply {
        let code = try await callBus("ReleaseName", [.string(name)]).decode(UInt32.self)
        guard let reply = ReleaseNameReply(rawValue: code) else {
            throw DBusMarshalError.typeMismatch(expected: "ReleaseName reply 1...3", actual: "\(code)")
        }
        return reply
    }

    /// Whether someone owns `name`.
    public func nameHasOwner(_ name: String) async throws -> Bool {
        try await callBus("NameHasOwner", [.string(name)]).decode(Bool.self)
    }

    /// The unique name owning `name`, or `nil` if no one does.
    public func getNameOwner(_ name: String) async throws -> String? {
        do {
            return try await callBus("GetNameOwner", [.string(name)]).decode(String.self)
        } catch let error as DBusError where error.name == .nameHasNoOwner {
            return nil
        }
    }

    /// The names currently on the bus.
    public func listNames() async throws -> [String] {
        try await callBus("ListNames").decode([String].self)
    }

    /// Follows owner changes of `name` (or of every name): detects a service (bluetoothd, blesim) starting,
    /// exiting or restarting. Active on the bus before it returns; ends with the connection.
    public func nameOwnerChanges(
        of name: String? = nil, buffering: SignalBuffering = .default
    ) async throws
        -> NameOwnerChanges
    {
        NameOwnerChanges(signals: try await signals(.nameOwnerChanged(of: name), buffering: buffering))
    }
}

/// A stream of ``NameOwnerChange``s (see ``DBusConnection/nameOwnerChanges(of:buffering:)``).
public struct NameOwnerChanges: AsyncSequence, Sendable {
    /// Each element is one change.
    public typealias Element = NameOwnerChange

    /// The underlying signal stream (for ``DBusSignalStream/droppedCount`` and ``DBusSignalStream/finish()``).
    public let signals: DBusSignalStream

    /// An iterator that decodes each `NameOwnerChanged` signal (malformed ones are skipped).
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncStream<DBusMessage>.Iterator

        /// The next change, or `nil` when the stream ends.
        public mutating func next() async -> NameOwnerChange? {
            while let message = await base.next() {
                if let change = NameOwnerChange(signal: message) { return change }
            }
            return nil
        }
    }

    /// An iterator over the changes.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: signals.makeAsyncIterator()) }
}
