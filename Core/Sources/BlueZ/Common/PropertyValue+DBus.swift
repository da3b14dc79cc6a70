import BLE
import DBus

extension PropertyValue {
    /// The BLE-layer value of a D-Bus value, following the table on
    /// ``PropertyValue``: variants are unwrapped, `ay` becomes ``bytes(_:)``,
    /// dictionaries keep their basic keys. Returns nil for values the BLE
    /// layer has no use for (signatures, file descriptors, structures).
    public init?(dbus value: DBusValue) {
        switch value {
        case .boolean(let v): self = .bool(v)
        case .int16(let v): self = .int(Int64(v))
        case .int32(let v): self = .int(Int64(v))
        case .int64(let v): self = .int(v)
        case .byte(let v): self = .uint(UInt64(v))
        case .uint16(let v): self = .uint(UInt64(v))
        case .uint32(let v): self = .uint(UInt64(v))
        case .uint64(let v): self = .uint(v)
        case .double(let v): self = .double(v)
        case .string(let v): self = .string(v)
        case .objectPath(let v): self = .objectPath(v.rawValue)
        case .bytes(let v): self = .bytes(v)
        case .array(.byte, let elements):
            self = .bytes(elements.compactMap { if case .byte(let b) = $0 { b } else { nil } })
        case .array(_, let elements): self = .array(elements.compactMap { PropertyValue(dbus: $0) })
        case .dictionary(_, _, let entries):
            var map: [PropertyValue: PropertyValue] = [:]
            for (key, value) in entries {
                guard let k = PropertyValue(dbus: key), let v = PropertyValue(dbus: value) else { continue }
                map[k] = v
            }
            self = .dictionary(map)
        case .variant(let inner):
            guard let unwrapped = PropertyValue(dbus: inner) else { return nil }
            self = unwrapped
        case .signature, .unixFD, .structure: return nil
        }
    }
}

/// Decoding of BlueZ's property containers (`a{sv}`, `a{sa{sv}}`,
/// `a{oa{sa{sv}}}`) into the BLE layer's maps. Malformed entries (a key of the
/// wrong type) are skipped, never fatal: they come from another process.
public enum BlueZDecoding {
    /// `a{sv}` → ``PropertyMap``.
    public static func properties(_ value: DBusValue) -> PropertyMap {
        var map: PropertyMap = [:]
        for (key, value) in value.dictionaryEntries ?? [] {
            guard let name = key.stringValue, let property = PropertyValue(dbus: value) else { continue }
            map[name] = property
        }
        return map
    }

    /// `a{sa{sv}}` → ``InterfaceMap``.
    public static func interfaces(_ value: DBusValue) -> InterfaceMap {
        var map: InterfaceMap = [:]
        for (key, value) in value.dictionaryEntries ?? [] {
            guard let name = key.stringValue else { continue }
            map[name] = properties(value)
        }
        return map
    }

    /// `a{oa{sa{sv}}}` (a GetManagedObjects reply) → ``ObjectTreeSnapshot``.
    public static func managedObjects(_ value: DBusValue) -> ObjectTreeSnapshot {
        var tree: ObjectTreeSnapshot = [:]
        for (key, value) in value.dictionaryEntries ?? [] {
            guard let path = key.stringValue else { continue }
            tree[path] = interfaces(value)
        }
        return tree
    }

    /// The tree delta a BlueZ signal carries (InterfacesAdded,
    /// InterfacesRemoved, PropertiesChanged), or nil for any other signal or
    /// a malformed one.
    public static func delta(of signal: DBusMessage) -> ObjectTreeDelta? {
        guard let arguments = try? signal.arguments() else { return nil }
        switch (signal.interface, signal.member) {
        case (BlueZNames.objectManager, "InterfacesAdded"):
            guard arguments.count == 2, let path = arguments[0].stringValue else { return nil }
            return .interfacesAdded(path: path, interfaces: interfaces(arguments[1]))
        case (BlueZNames.objectManager, "InterfacesRemoved"):
            guard arguments.count == 2, let path = arguments[0].stringValue else { return nil }
            let names = (arguments[1].arrayValue ?? []).compactMap(\.stringValue)
            return .interfacesRemoved(path: path, interfaces: names)
        case (BlueZNames.properties, "PropertiesChanged"):
            guard arguments.count == 3, let path = signal.path?.rawValue, let interface = arguments[0].stringValue
            else { return nil }
            let invalidated = (arguments[2].arrayValue ?? []).compactMap(\.stringValue)
            return .propertiesChanged(
                path: path, interface: interface, changed: properties(arguments[1]), invalidated: invalidated)
        default:
            return nil
        }
    }
}
