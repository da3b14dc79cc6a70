import BLE
import DBus

/// D-Bus names used with bluetoothd 5.66 beyond ``BlueZInterface``: the
/// standard interfaces, the option keys of the GATT methods and the error
/// names the backends react to.
public enum BlueZNames {
    /// `org.bluez`.
    public static let service = BlueZInterface.busName
    /// `org.freedesktop.DBus.ObjectManager`.
    public static let objectManager = "org.freedesktop.DBus.ObjectManager"
    /// `org.freedesktop.DBus.Properties`.
    public static let properties = "org.freedesktop.DBus.Properties"
    /// bluetoothd's object manager lives at the root.
    public static let rootPath = ObjectPath.root

    /// Values of the `type` option of GattCharacteristic1.WriteValue.
    public enum WriteTypeOption {
        /// Write request (with response).
        public static let request = "request"
        /// Write command (without response).
        public static let command = "command"
        /// Reliable write.
        public static let reliable = "reliable"
    }

    /// The `a{sv}` options of ReadValue/WriteValue: `offset` (`q`), `type`
    /// (`s`, characteristics only) and `mtu` (`q`, AcquireWrite/AcquireNotify
    /// take none from a client but reply with the MTU).
    public static func gattOptions(offset: Int = 0, type: String? = nil) -> DBusValue {
        var entries: [(key: DBusValue, value: DBusValue)] = []
        if offset > 0 { entries.append((.string("offset"), .variant(.uint16(UInt16(clamping: offset))))) }
        if let type { entries.append((.string("type"), .variant(.string(type)))) }
        return .dictionary(key: .string, value: .variant, entries)
    }

    /// An empty `a{sv}`.
    public static let noOptions = DBusValue.dictionary(key: .string, value: .variant, [])
}
