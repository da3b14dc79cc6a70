/// What an object manager lists for an object (`GetManagedObjects`) and announces when its interfaces change
/// (`InterfacesAdded`, `InterfacesRemoved`).
///
/// Under a style that announces the standard interfaces (``ObjectServer/Style/bluez``) the lists follow gdbus, as
/// recorded from bluetoothd 5.66 and seen by its clients: an object's first interface brings
/// `org.freedesktop.DBus.Introspectable` (listed first) and its first interface with properties brings
/// `org.freedesktop.DBus.Properties` (listed last), both with no properties; removing the object's last interface
/// removes them too, listed `Properties`, `Introspectable`, then the object's own.
enum Announcement {
    /// An interface name and its `a{sv}` of readable, present properties.
    typealias Entry = (name: String, properties: DBusValue)

    /// The entries of `added`, joined to an object that had `before`.
    static func added(
        _ added: [ObjectServer.InterfaceEntry], to before: [ObjectServer.InterfaceEntry], style: ObjectServer.Style
    ) -> [Entry] {
        let own = added.map { (name: $0.definition.name, properties: ObjectServer.readableProperties($0)) }
        guard style.announcesStandardInterfaces, !added.isEmpty else { return own }
        let gainsObject = before.isEmpty
        let gainsProperties = !hasProperties(before) && hasProperties(added)
        return (gainsObject ? [empty(StandardInterfaces.introspectable)] : []) + own
            + (gainsProperties ? [empty(StandardInterfaces.properties)] : [])
    }

    /// The names of `removed`, taken from an object that keeps `remaining`.
    static func removed(
        _ removed: [ObjectServer.InterfaceEntry], leaving remaining: [ObjectServer.InterfaceEntry],
        style: ObjectServer.Style
    ) -> [String] {
        let own = removed.map(\.definition.name)
        guard style.announcesStandardInterfaces, !removed.isEmpty else { return own }
        let losesProperties = hasProperties(removed) && !hasProperties(remaining)
        return (losesProperties ? [StandardInterfaces.properties] : [])
            + (remaining.isEmpty ? [StandardInterfaces.introspectable] : []) + own
    }

    /// `a{sa{sv}}` of an object with `interfaces`, as `GetManagedObjects` lists it.
    static func listed(_ interfaces: [ObjectServer.InterfaceEntry], style: ObjectServer.Style) -> DBusValue {
        dictionary(added(interfaces, to: [], style: style))
    }

    /// `a{sa{sv}}` of `entries`, in order.
    static func dictionary(_ entries: [Entry]) -> DBusValue {
        .dictionary(
            key: .string, value: .dictionary(key: .string, value: .variant),
            entries.map { (key: .string($0.name), value: $0.properties) })
    }

    private static func hasProperties(_ interfaces: [ObjectServer.InterfaceEntry]) -> Bool {
        interfaces.contains { !$0.definition.properties.isEmpty }
    }

    private static func empty(_ name: String) -> Entry {
        (name: name, properties: .dictionary(key: .string, value: .variant, []))
    }
}
