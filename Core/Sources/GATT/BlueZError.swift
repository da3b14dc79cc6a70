/// A D-Bus error as bluetoothd sends or receives it: an `org.bluez.Error.*`
/// name and an optional message string. Pure value; the D-Bus layer carries it.
public struct BlueZError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The D-Bus error name.
    public var name: Name
    /// The error's message argument, if any.
    public var message: String?

    /// The error `name` with `message`.
    public init(_ name: Name, _ message: String? = nil) {
        self.name = name
        self.message = message
    }

    /// `org.bluez.Error.NotPermitted: Read not permitted`.
    public var description: String {
        guard let message else { return name.rawValue }
        return "\(name.rawValue): \(message)"
    }

    /// A D-Bus error name. Open: any name round-trips.
    public struct Name: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
        /// The full D-Bus name, e.g. `org.bluez.Error.Failed`.
        public let rawValue: String

        /// The name `rawValue`.
        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// The name written as a literal.
        public init(stringLiteral value: String) {
            self.rawValue = value
        }

        /// The full D-Bus name.
        public var description: String { rawValue }

        /// `org.bluez.Error.Failed`.
        public static let failed: Name = "org.bluez.Error.Failed"
        /// `org.bluez.Error.InProgress`.
        public static let inProgress: Name = "org.bluez.Error.InProgress"
        /// `org.bluez.Error.NotPermitted`.
        public static let notPermitted: Name = "org.bluez.Error.NotPermitted"
        /// `org.bluez.Error.NotAuthorized`.
        public static let notAuthorized: Name = "org.bluez.Error.NotAuthorized"
        /// `org.bluez.Error.InvalidValueLength`.
        public static let invalidValueLength: Name = "org.bluez.Error.InvalidValueLength"
        /// `org.bluez.Error.InvalidOffset`.
        public static let invalidOffset: Name = "org.bluez.Error.InvalidOffset"
        /// `org.bluez.Error.InvalidArguments`.
        public static let invalidArguments: Name = "org.bluez.Error.InvalidArguments"
        /// `org.bluez.Error.NotSupported`.
        public static let notSupported: Name = "org.bluez.Error.NotSupported"
        /// `org.bluez.Error.NotConnected`.
        public static let notConnected: Name = "org.bluez.Error.NotConnected"
        /// `org.bluez.Error.AlreadyExists`.
        public static let alreadyExists: Name = "org.bluez.Error.AlreadyExists"
        /// `org.bluez.Error.DoesNotExist`.
        public static let doesNotExist: Name = "org.bluez.Error.DoesNotExist"
    }
}
