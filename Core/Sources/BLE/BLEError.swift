import GATT

/// Why a BLE operation failed, like `CBError` and `CBATTError` in one typed
/// error. ``bluezError`` carries the D-Bus error BlueZ replied with, when the
/// failure came from BlueZ (`org.bluez.Error.InProgress`, ...).
public struct BLEError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: Hashable, Sendable {
        /// The peripheral is not connected (or the link dropped while the
        /// operation was pending).
        case notConnected
        /// Connecting failed (BlueZ Device1.Connect failed or timed out).
        case connectionFailed
        /// No service with the requested UUID on the peripheral.
        case serviceNotFound
        /// No characteristic with the requested UUID in the service.
        case characteristicNotFound
        /// No descriptor with the requested UUID on the characteristic.
        case descriptorNotFound
        /// The operation's deadline passed.
        case timeout
        /// The peer (or the local stack) answered with this ATT error.
        case notPermitted(ATTError)
        /// The attribute is busy; BlueZ kept answering
        /// `org.bluez.Error.InProgress` after every retry.
        case inProgress
        /// The adapter is powered off.
        case poweredOff
        /// No adapter (or no LE support).
        case unsupported
        /// The bus refused us (`org.freedesktop.DBus.Error.AccessDenied`).
        case unauthorized
        /// bluetoothd is not (yet) on the bus, or the state is not known yet.
        case unavailable
        /// The characteristic does not allow the operation (e.g. a read on a
        /// characteristic without the read property).
        case operationNotSupported
        /// The value is longer than allowed (e.g. a write without response
        /// above ``Peripheral/maximumWriteValueLength(for:)``, or advertising
        /// data above the 31-byte legacy limit).
        case invalidLength
        /// The caller cancelled the operation (cancelConnection, stopScan, task
        /// cancellation).
        case cancelled
        /// An advertisement or service is already registered.
        case alreadyExists
        /// Anything else BlueZ reported (see ``BLEError/bluezError``).
        case failed
    }

    /// What went wrong.
    public var code: Code
    /// The BlueZ D-Bus error behind the failure, when there was one.
    public var bluezError: BlueZError?
    /// A human-readable detail.
    public var message: String?

    /// An error with `code`, the BlueZ error behind it and a detail.
    public init(_ code: Code, bluezError: BlueZError? = nil, message: String? = nil) {
        self.code = code
        self.bluezError = bluezError
        self.message = message
    }

    /// The peripheral is not connected.
    public static let notConnected = BLEError(.notConnected)
    /// The deadline passed.
    public static let timeout = BLEError(.timeout)
    /// The adapter is powered off.
    public static let poweredOff = BLEError(.poweredOff)
    /// No adapter.
    public static let unsupported = BLEError(.unsupported)
    /// The operation was cancelled.
    public static let cancelled = BLEError(.cancelled)

    /// The error a remote ReadValue/WriteValue (or other Device1 / GATT call)
    /// reply `error` means, using the BlueZ error table in GATT
    /// (``BlueZATTErrorMapping/cause(ofClientError:)``).
    public init(bluez error: BlueZError) {
        switch error.name {
        case .inProgress: self.init(.inProgress, bluezError: error)
        case .notConnected: self.init(.notConnected, bluezError: error)
        case .alreadyExists: self.init(.alreadyExists, bluezError: error)
        case .notSupported: self.init(.operationNotSupported, bluezError: error)
        default:
            switch BlueZATTErrorMapping.cause(ofClientError: error) {
            case .att(let att): self.init(.notPermitted(att), bluezError: error)
            case .insufficientSecurity:
                self.init(.notPermitted(.insufficientAuthentication), bluezError: error, message: "not paired")
            case .notATT: self.init(.failed, bluezError: error, message: error.message)
            }
        }
    }

    /// The code, the BlueZ error name and the detail.
    public var description: String {
        var text = "\(code)"
        if let bluezError { text += " (\(bluezError))" }
        if let message { text += ": \(message)" }
        return text
    }
}
