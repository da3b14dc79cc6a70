import BLE
import DBus
import GATT

extension BLEError {
    /// The ``BLEError`` a failed D-Bus call means, keeping the D-Bus error
    /// name in ``BLEError/bluezError``:
    ///
    /// - `org.bluez.Error.*` through ``BLEError/init(bluez:)`` (GATT's single
    ///   BlueZ error table; `InProgress` stays ``BLEError/Code/inProgress``);
    /// - `org.freedesktop.DBus.Error.AccessDenied` (the bus policy refuses us)
    ///   → ``BLEError/Code/unauthorized``;
    /// - NoReply / Timeout / TimedOut → ``BLEError/Code/timeout``;
    /// - ServiceUnknown / NameHasNoOwner / Disconnected (bluetoothd or the
    ///   bus gone) → ``BLEError/Code/unavailable``;
    /// - UnknownObject / UnknownMethod / UnknownInterface (the object went
    ///   away, e.g. a device removed) → ``BLEError/Code/notConnected``;
    /// - anything else → ``BLEError/Code/failed``.
    public init(dbus error: DBusError) {
        let name = BlueZError.Name(rawValue: error.name.rawValue)
        let underlying = BlueZError(name, error.message.isEmpty ? nil : error.message)
        if error.name.rawValue.hasPrefix("org.bluez.Error.") {
            self.init(bluez: underlying)
            return
        }
        let code: Code
        switch error.name {
        case .accessDenied: code = .unauthorized
        case .noReply, .timeout, .timedOut: code = .timeout
        case .serviceUnknown, .nameHasNoOwner, .disconnected: code = .unavailable
        case .unknownObject, .unknownMethod, .unknownInterface: code = .notConnected
        default: code = .failed
        }
        self.init(code, bluezError: underlying, message: error.message.isEmpty ? nil : error.message)
    }

    /// The ``BLEError`` for anything a D-Bus call can throw: a ``DBusError``
    /// as above, a marshalling error (a malformed reply) as
    /// ``BLEError/Code/failed``, a task cancellation as
    /// ``BLEError/Code/cancelled``.
    public init(callFailure error: any Error) {
        switch error {
        case let error as BLEError: self = error
        case let error as DBusError: self.init(dbus: error)
        case is CancellationError: self.init(.cancelled)
        default: self.init(.failed, message: "\(error)")
        }
    }
}
