import GATT

/// The errors bluetoothd 5.66 replies to adapter and device requests, with its messages
/// (BlueZ's `src/error.c`), as the shared `GATT.BlueZError` value.
///
/// SimCore's state machines throw these; the `blesim` shell sends them as D-Bus error replies.
public enum BluetoothdError {
    /// `org.bluez.Error.NotReady` "Resource Not Ready" (for example: adapter powered off).
    public static let notReady = BlueZError("org.bluez.Error.NotReady", "Resource Not Ready")
    /// `org.bluez.Error.InProgress` "Operation already in progress".
    public static let inProgress = BlueZError(.inProgress, "Operation already in progress")
    /// `org.bluez.Error.InvalidArguments` "Invalid arguments in method call".
    public static let invalidArguments = BlueZError(.invalidArguments, "Invalid arguments in method call")
    /// `org.bluez.Error.DoesNotExist` "Does Not Exist".
    public static let doesNotExist = BlueZError(.doesNotExist, "Does Not Exist")
    /// `org.bluez.Error.AlreadyExists` "Already Exists".
    public static let alreadyExists = BlueZError(.alreadyExists, "Already Exists")
    /// `org.bluez.Error.NotSupported` "Operation is not supported".
    public static let notSupported = BlueZError(.notSupported, "Operation is not supported")
    /// `org.bluez.Error.NotAuthorized` "Operation Not Authorized".
    public static let notAuthorized = BlueZError(.notAuthorized, "Operation Not Authorized")
    /// `org.bluez.Error.NotConnected` "Not Connected".
    public static let notConnected = BlueZError(.notConnected, "Not Connected")

    /// `org.bluez.Error.Failed` with bluetoothd's message, for example "No discovery started".
    public static func failed(_ message: String) -> BlueZError { BlueZError(.failed, message) }
}
