/// Bluetooth UUIDs in the form BlueZ shows them on D-Bus: 128-bit, lower case, with dashes.
///
/// BlueZ accepts 16-bit (`180d`, `0x180D`), 32-bit and 128-bit strings in SetDiscoveryFilter and
/// reports every UUID in 128-bit form; comparing the 128-bit forms makes `0x180D` equal
/// `0000180d-0000-1000-8000-00805f9b34fb`.
/// (Kept internal to SimCore; it can give way to `GATT.BluetoothUUID` once that lands.)
public enum UUIDText {
    private static let baseSuffix = "-0000-1000-8000-00805f9b34fb"

    /// The canonical 128-bit form of `text`, or nil when it is not a UUID BlueZ would accept.
    public static func canonical(_ text: String) -> String? {
        var body = Substring(text)
        if body.hasPrefix("0x") || body.hasPrefix("0X") { body = body.dropFirst(2) }
        let lower = body.lowercased()
        switch lower.count {
        case 4, 8:
            guard lower.allSatisfy(\.isHexDigit) else { return nil }
            return String(repeating: "0", count: 8 - lower.count) + lower + baseSuffix
        case 36:
            let groups = lower.split(separator: "-", omittingEmptySubsequences: false)
            guard groups.map(\.count) == [8, 4, 4, 4, 12],
                groups.allSatisfy({ $0.allSatisfy(\.isHexDigit) })
            else { return nil }
            return lower
        default:
            return nil
        }
    }

    /// The canonical form of a 16-bit UUID, as carried in advertising data.
    public static func canonical(uuid16: UInt16) -> String {
        "0000" + hex(UInt64(uuid16), digits: 4) + baseSuffix
    }

    static func hex(_ value: UInt64, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
