/// An error reply from a D-Bus peer, or a failure of the connection described the D-Bus way.
///
/// Error replies arrive with a name (`org.freedesktop.DBus.Error.UnknownMethod`, `org.bluez.Error.Failed`, ...) and
/// usually a message; both are kept. Handlers of exported methods throw a `DBusError` to send an error reply. Local
/// failures use the standard names too: a call whose deadline passes fails with ``Name/noReply``, and calls pending
/// when the connection closes fail with ``Name/disconnected``.
public struct DBusError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A D-Bus error name such as `org.freedesktop.DBus.Error.InvalidArgs`.
    public struct Name: RawRepresentable, Sendable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
        /// The dotted error name.
        public let rawValue: String
        /// Wraps a dotted error name (not validated here; invalid names are replaced by `Failed` when sent).
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Wraps a dotted error name given as a literal.
        public init(stringLiteral value: String) { self.rawValue = value }
        /// The dotted error name.
        public var description: String { rawValue }

        /// `org.freedesktop.DBus.Error.Failed`: a generic failure.
        public static let failed: Name = "org.freedesktop.DBus.Error.Failed"
        /// `org.freedesktop.DBus.Error.NoMemory`.
        public static let noMemory: Name = "org.freedesktop.DBus.Error.NoMemory"
        /// `org.freedesktop.DBus.Error.ServiceUnknown`: no one owns the destination name.
        public static let serviceUnknown: Name = "org.freedesktop.DBus.Error.ServiceUnknown"
        /// `org.freedesktop.DBus.Error.NameHasNoOwner`.
        public static let nameHasNoOwner: Name = "org.freedesktop.DBus.Error.NameHasNoOwner"
        /// `org.freedesktop.DBus.Error.NoReply`: no reply within the deadline.
        public static let noReply: Name = "org.freedesktop.DBus.Error.NoReply"
        /// `org.freedesktop.DBus.Error.IOError`.
        public static let ioError: Name = "org.freedesktop.DBus.Error.IOError"
        /// `org.freedesktop.DBus.Error.BadAddress`.
        public static let badAddress: Name = "org.freedesktop.DBus.Error.BadAddress"
        /// `org.freedesktop.DBus.Error.NotSupported`.
        public static let notSupported: Name = "org.freedesktop.DBus.Error.NotSupported"
        /// `org.freedesktop.DBus.Error.LimitsExceeded`.
        public static let limitsExceeded: Name = "org.freedesktop.DBus.Error.LimitsExceeded"
        /// `org.freedesktop.DBus.Error.AccessDenied`: the caller may not do this.
        public static let accessDenied: Name = "org.freedesktop.DBus.Error.AccessDenied"
        /// `org.freedesktop.DBus.Error.AuthFailed`.
        public static let authFailed: Name = "org.freedesktop.DBus.Error.AuthFailed"
        /// `org.freedesktop.DBus.Error.NoServer`.
        public static let noServer: Name = "org.freedesktop.DBus.Error.NoServer"
        /// `org.freedesktop.DBus.Error.NoNetwork`.
        public static let noNetwork: Name = "org.freedesktop.DBus.Error.NoNetwork"
        /// `org.freedesktop.DBus.Error.AddressInUse`.
        public static let addressInUse: Name = "org.freedesktop.DBus.Error.AddressInUse"
        /// `org.freedesktop.DBus.Error.FileNotFound` (e.g. no socket at a `unix:path=` address).
        public static let fileNotFound: Name = "org.freedesktop.DBus.Error.FileNotFound"
        /// `org.freedesktop.DBus.Error.FileExists`.
        public static let fileExists: Name = "org.freedesktop.DBus.Error.FileExists"
        /// `org.freedesktop.DBus.Error.InconsistentMessage`.
        public static let inconsistentMessage: Name = "org.freedesktop.DBus.Error.InconsistentMessage"
        /// `org.freedesktop.DBus.Error.UnixProcessIdUnknown`.
        public static let unixProcessIdUnknown: Name = "org.freedesktop.DBus.Error.UnixProcessIdUnknown"
        /// `org.freedesktop.DBus.Error.Spawn.ServiceNotFound`: no service file for an activatable name.
        public static let spawnServiceNotFound: Name = "org.freedesktop.DBus.Error.Spawn.ServiceNotFound"
        /// `org.freedesktop.DBus.Error.Timeout`.
        public static let timeout: Name = "org.freedesktop.DBus.Error.Timeout"
        /// `org.freedesktop.DBus.Error.TimedOut`.
        public static let timedOut: Name = "org.freedesktop.DBus.Error.TimedOut"
        /// `org.freedesktop.DBus.Error.Disconnected`: the connection is closed.
        public static let disconnected: Name = "org.freedesktop.DBus.Error.Disconnected"
        /// `org.freedesktop.DBus.Error.InvalidArgs`: arguments of the wrong type or value.
        public static let invalidArgs: Name = "org.freedesktop.DBus.Error.InvalidArgs"
        /// `org.freedesktop.DBus.Error.InvalidSignature`.
        public static let invalidSignature: Name = "org.freedesktop.DBus.Error.InvalidSignature"
        /// `org.freedesktop.DBus.Error.UnknownMethod`.
        public static let unknownMethod: Name = "org.freedesktop.DBus.Error.UnknownMethod"
        /// `org.freedesktop.DBus.Error.UnknownObject`.
        public static let unknownObject: Name = "org.freedesktop.DBus.Error.UnknownObject"
        /// `org.freedesktop.DBus.Error.UnknownInterface`.
        public static let unknownInterface: Name = "org.freedesktop.DBus.Error.UnknownInterface"
        /// `org.freedesktop.DBus.Error.UnknownProperty`.
        public static let unknownProperty: Name = "org.freedesktop.DBus.Error.UnknownProperty"
        /// `org.freedesktop.DBus.Error.PropertyReadOnly`.
        public static let propertyReadOnly: Name = "org.freedesktop.DBus.Error.PropertyReadOnly"
        /// `org.freedesktop.DBus.Error.ObjectPathInUse`: an object is already exported at that path.
        public static let objectPathInUse: Name = "org.freedesktop.DBus.Error.ObjectPathInUse"
        /// `org.freedesktop.DBus.Error.MatchRuleNotFound`.
        public static let matchRuleNotFound: Name = "org.freedesktop.DBus.Error.MatchRuleNotFound"
        /// `org.freedesktop.DBus.Error.MatchRuleInvalid`.
        public static let matchRuleInvalid: Name = "org.freedesktop.DBus.Error.MatchRuleInvalid"
        /// `org.freedesktop.DBus.Error.InteractiveAuthorizationRequired`.
        public static let interactiveAuthorizationRequired: Name =
            "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired"
    }

    /// The error name.
    public var name: Name
    /// The human-readable message (the first string argument of the error reply; may be empty).
    public var message: String

    /// An error with a name and a message.
    public init(_ name: Name, _ message: String = "") {
        self.name = name
        self.message = message
    }

    /// `name: message`.
    public var description: String { message.isEmpty ? name.rawValue : "\(name.rawValue): \(message)" }

    static func disconnected() -> DBusError { DBusError(.disconnected, "the D-Bus connection is closed") }
}
