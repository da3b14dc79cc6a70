/// An error bluetoothd returns, by its D-Bus name and message (BlueZ's `src/error.c`).
///
/// SimCore throws these from the adapter and device state machines; the `blesim` shell sends
/// them as D-Bus error replies unchanged.
public struct BlueZError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The D-Bus error name, for example `org.bluez.Error.NotReady`.
    public let name: String
    /// The human-readable message bluetoothd puts in the error.
    public let message: String

    /// An error with any name and message.
    public init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    /// `org.bluez.Error.NotReady` "Resource Not Ready" (for example: adapter powered off).
    public static let notReady = BlueZError(name: "org.bluez.Error.NotReady", message: "Resource Not Ready")
    /// `org.bluez.Error.InProgress` "Operation already in progress".
    public static let inProgress = BlueZError(
        name: "org.bluez.Error.InProgress", message: "Operation already in progress")
    /// `org.bluez.Error.InvalidArguments` "Invalid arguments in method call".
    public static let invalidArguments = BlueZError(
        name: "org.bluez.Error.InvalidArguments", message: "Invalid arguments in method call")
    /// `org.bluez.Error.DoesNotExist` "Does Not Exist".
    public static let doesNotExist = BlueZError(name: "org.bluez.Error.DoesNotExist", message: "Does Not Exist")
    /// `org.bluez.Error.NotSupported` "Operation is not supported".
    public static let notSupported = BlueZError(
        name: "org.bluez.Error.NotSupported", message: "Operation is not supported")
    /// `org.bluez.Error.NotAuthorized` "Operation Not Authorized".
    public static let notAuthorized = BlueZError(
        name: "org.bluez.Error.NotAuthorized", message: "Operation Not Authorized")
    /// `org.bluez.Error.NotConnected` "Not Connected".
    public static let notConnected = BlueZError(name: "org.bluez.Error.NotConnected", message: "Not Connected")

    /// `org.bluez.Error.Failed` with bluetoothd's message, for example "No discovery started".
    public static func failed(_ message: String) -> BlueZError {
        BlueZError(name: "org.bluez.Error.Failed", message: message)
    }

    public var description: String { "\(name): \(message)" }
}
