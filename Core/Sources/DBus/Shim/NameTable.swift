import Glibc

/// A fixed set of names (interfaces, members, property names) that decoding hands out as shared strings: a name
/// read from a message that is in the table costs a comparison instead of a new string (an allocation for any name
/// longer than 15 bytes) per message. Build one per vocabulary, once; lookups are read-only and thread-safe.
public final class DBusNameTable: Sendable {
    private let byLength: [Int: [(bytes: [UInt8], name: String)]]

    /// A table of `names`.
    public init(_ names: [String]) {
        var byLength: [Int: [(bytes: [UInt8], name: String)]] = [:]
        for name in Set(names) {
            let bytes = Array(name.utf8)
            byLength[bytes.count, default: []].append((bytes, name))
        }
        self.byLength = byLength
    }

    /// The shared string equal to the `count` bytes at `text`, if the table has it.
    func name(_ text: UnsafePointer<CChar>, count: Int) -> String? {
        guard let candidates = byLength[count] else { return nil }
        for candidate in candidates {
            let equal = candidate.bytes.withUnsafeBytes { $0.baseAddress.map { memcmp($0, text, count) == 0 } ?? true }
            if equal { return candidate.name }
        }
        return nil
    }

    /// The table's string for the NUL-terminated `text`, else a new one.
    func string(_ text: UnsafePointer<CChar>) -> String {
        name(text, count: strlen(text)) ?? String(cString: text)
    }

    /// The names of D-Bus itself that every signal carries in its header.
    static let standard = DBusNameTable([
        "org.freedesktop.DBus", "org.freedesktop.DBus.Properties", "org.freedesktop.DBus.ObjectManager",
        "org.freedesktop.DBus.Introspectable", "org.freedesktop.DBus.Peer", "PropertiesChanged", "InterfacesAdded",
        "InterfacesRemoved", "NameOwnerChanged", "GetManagedObjects", "GetAll", "Get", "Set",
    ])
}
