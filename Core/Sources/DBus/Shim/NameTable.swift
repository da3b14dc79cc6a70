import Glibc

/// A fixed set of names (interfaces, members, property names) that decoding hands out as shared strings: a name
/// read from a message that is in the table costs a comparison instead of a new string (an allocation for any name
/// longer than 15 bytes) per message. Build one per vocabulary, once; lookups are read-only and thread-safe.
public final class DBusNameTable: Sendable {
    /// Every name's bytes, one after the other, shortest names first.
    private let bytes: [UInt8]
    /// Each name's offset in ``bytes`` and its shared string, in the same order.
    private let entries: [(offset: Int, name: String)]
    /// For each length, where its names start in ``entries``; the names of length `n` are
    /// `starts[n]..<starts[n + 1]`.
    private let starts: [Int]

    /// A table of `names`.
    public init(_ names: [String]) {
        let sorted = Set(names).sorted { ($0.utf8.count, $0) < ($1.utf8.count, $1) }
        var bytes: [UInt8] = []
        var entries: [(offset: Int, name: String)] = []
        var starts: [Int] = []
        for name in sorted {
            while starts.count <= name.utf8.count { starts.append(entries.count) }
            entries.append((bytes.count, name))
            bytes += name.utf8
        }
        starts.append(entries.count)
        self.bytes = bytes
        self.entries = entries
        self.starts = starts
    }

    /// The shared string equal to the `count` bytes at `text`, if the table has it.
    func name(_ text: UnsafePointer<CChar>, count: Int) -> String? {
        guard count + 1 < starts.count else { return nil }
        let candidates = starts[count]..<starts[count + 1]
        if count == 0 { return candidates.first.map { entries[$0].name } }
        return bytes.withUnsafeBytes { table -> String? in
            guard let base = table.baseAddress else { return nil }
            for index in candidates where memcmp(base + entries[index].offset, text, count) == 0 {
                return entries[index].name
            }
            return nil
        }
    }

    /// The table's string for the NUL-terminated `text`, else a new one.
    func string(_ text: UnsafePointer<CChar>) -> String {
        name(text, count: strlen(text)) ?? String(cString: text)
    }

    /// The body signatures of the messages BlueZ and the bus send most.
    static let signatures = DBusNameTable([
        "", "s", "o", "v", "b", "u", "ay", "as", "ao", "ss", "sss", "a{sv}", "sa{sv}as", "oa{sa{sv}}", "oas",
        "a{oa{sa{sv}}}", "aya{sv}", "a{sv}ay", "hq",
    ])

    /// The names of D-Bus itself that every signal carries in its header.
    static let standard = DBusNameTable([
        "org.freedesktop.DBus", "org.freedesktop.DBus.Properties", "org.freedesktop.DBus.ObjectManager",
        "org.freedesktop.DBus.Introspectable", "org.freedesktop.DBus.Peer", "PropertiesChanged", "InterfacesAdded",
        "InterfacesRemoved", "NameOwnerChanged", "GetManagedObjects", "GetAll", "Get", "Set",
    ])
}
