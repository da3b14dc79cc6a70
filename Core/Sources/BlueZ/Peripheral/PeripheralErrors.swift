import BLE
import DBus
import GATT

/// How the peripheral backend turns D-Bus failures into ``BLEError`` and ATT
/// answers into D-Bus error replies.
enum PeripheralErrors {
    /// A failed call to bluetoothd as a ``BLEError``: BlueZ's own errors
    /// through `BLEError(bluez:)`; the bus refusing us is `unauthorized`;
    /// bluetoothd absent or gone is `unavailable`.
    static func bleError(_ error: any Error, doing what: String) -> BLEError {
        guard let dbus = error as? DBusError else {
            return BLEError(.failed, message: "\(what): \(error)")
        }
        switch dbus.name {
        case .accessDenied, .authFailed, .interactiveAuthorizationRequired:
            return BLEError(.unauthorized, message: "\(what): \(dbus)")
        case .serviceUnknown, .nameHasNoOwner, .noReply, .disconnected, .noServer, .timeout, .timedOut:
            return BLEError(.unavailable, message: "\(what): \(dbus)")
        default:
            let bluez = BlueZError(
                BlueZError.Name(rawValue: dbus.name.rawValue), dbus.message.isEmpty ? nil : dbus.message)
            var result = BLEError(bluez: bluez)
            result.message = "\(what): \(dbus)"
            return result
        }
    }

    /// The D-Bus error reply that makes bluetoothd send `error` to the peer
    /// (``BlueZATTErrorMapping/applicationError(for:access:)``).
    static func reply(for error: ATTError, access: BlueZATTErrorMapping.Access) -> DBusError {
        let bluez = BlueZATTErrorMapping.applicationError(for: error, access: access)
        return DBusError(DBusError.Name(rawValue: bluez.name.rawValue), bluez.message ?? "")
    }

    /// Whether a D-Bus failure says bluetoothd (or the bus) refused us.
    static func isAccessDenied(_ error: any Error) -> Bool {
        (error as? DBusError)?.name == .accessDenied
    }
}
