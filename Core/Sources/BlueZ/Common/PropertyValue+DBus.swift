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

extension PropertyValue {
    /// The value under `reader`, mapped as ``init(dbus:)`` maps a ``DBusValue`` but read straight from the
    /// message (no ``DBusValue`` in between). Nil for values the BLE layer has no use for.
    public init?(reading reader: DBusBodyReader) {
        guard let code = reader.typeCode else { return nil }
        switch code {
        case UInt8(ascii: "b"):
            guard let value = reader.bool() else { return nil }
            self = .bool(value)
        case UInt8(ascii: "n"), UInt8(ascii: "i"), UInt8(ascii: "x"):
            guard let value = reader.signedInteger() else { return nil }
            self = .int(value)
        case UInt8(ascii: "y"), UInt8(ascii: "q"), UInt8(ascii: "u"), UInt8(ascii: "t"):
            guard let value = reader.unsignedInteger() else { return nil }
            self = .uint(value)
        case UInt8(ascii: "d"):
            guard let value = reader.double() else { return nil }
            self = .double(value)
        case UInt8(ascii: "s"):
            guard let value = reader.string() else { return nil }
            self = .string(value)
        case UInt8(ascii: "o"):
            guard let value = reader.string() else { return nil }
            self = .objectPath(value)
        case UInt8(ascii: "v"):
            guard let inner = reader.withContents({ PropertyValue(reading: $0) }), let inner else { return nil }
            self = inner
        case UInt8(ascii: "a"):
            switch reader.elementTypeCode {
            case UInt8(ascii: "y"):
                self = .bytes(reader.bytes() ?? [])
            case UInt8(ascii: "e"):
                var map: [PropertyValue: PropertyValue] = [:]
                _ = reader.withContents { entries in
                    while entries.typeCode != nil {
                        _ = entries.withContents { pair in
                            guard let key = PropertyValue(reading: pair), pair.next(),
                                let value = PropertyValue(reading: pair)
                            else { return }
                            map[key] = value
                        }
                        entries.next()
                    }
                }
                self = .dictionary(map)
            default:
                var elements: [PropertyValue] = []
                _ = reader.withContents { items in
                    while items.typeCode != nil {
                        if let element = PropertyValue(reading: items) { elements.append(element) }
                        items.next()
                    }
                }
                self = .array(elements)
            }
        default:
            return nil
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

    /// BlueZ's interface and property names, shared instead of allocated per signal.
    static let names = DBusNameTable([
        BlueZInterface.adapter, BlueZInterface.device, BlueZInterface.gattService, BlueZInterface.gattCharacteristic,
        BlueZInterface.gattDescriptor, BlueZInterface.advertisingManager, BlueZInterface.gattManager,
        "org.bluez.Battery1", "org.bluez.Input1", "org.bluez.MediaControl1", "org.bluez.Network1",
        "org.freedesktop.DBus.Properties", "org.freedesktop.DBus.Introspectable",
        "Address", "AddressType", "Name", "Alias", "Class", "Appearance", "Icon", "Paired", "Bonded", "Trusted",
        "Blocked", "LegacyPairing", "RSSI", "TxPower", "Connected", "UUIDs", "Modalias", "Adapter",
        "ManufacturerData", "ServiceData", "ServicesResolved", "AdvertisingFlags", "AdvertisingData",
        "WakeAllowed", "Sets", "Powered", "Discoverable", "Pairable", "Discovering", "Roles", "ExperimentalFeatures",
        "UUID", "Primary", "Device", "Includes", "Handle", "Service", "Value", "Notifying", "Flags", "MTU",
        "WriteAcquired", "NotifyAcquired", "Characteristic",
    ])

    /// `a{sv}` under `reader` → ``PropertyMap``.
    public static func properties(reading reader: DBusBodyReader) -> PropertyMap {
        var map: PropertyMap = [:]
        dictionary(reading: reader) { entry in
            guard let name = entry.string(in: names), entry.next(), let property = PropertyValue(reading: entry) else {
                return
            }
            map[name] = property
        }
        return map
    }

    /// `a{sa{sv}}` under `reader` → ``InterfaceMap``.
    public static func interfaces(reading reader: DBusBodyReader) -> InterfaceMap {
        var map: InterfaceMap = [:]
        dictionary(reading: reader) { entry in
            guard let name = entry.string(in: names), entry.next() else { return }
            map[name] = properties(reading: entry)
        }
        return map
    }

    /// `a{oa{sa{sv}}}` under `reader` (a GetManagedObjects reply) → ``ObjectTreeSnapshot``.
    public static func managedObjects(reading reader: DBusBodyReader) -> ObjectTreeSnapshot {
        var tree: ObjectTreeSnapshot = [:]
        dictionary(reading: reader) { entry in
            guard let path = entry.string(), entry.next() else { return }
            tree[path] = interfaces(reading: entry)
        }
        return tree
    }

    /// `as`/`ao` under `reader` → its strings (other elements skipped).
    public static func strings(reading reader: DBusBodyReader) -> [String] {
        var strings: [String] = []
        _ = reader.withContents { items in
            while items.typeCode != nil {
                if let string = items.string(in: names) { strings.append(string) }
                items.next()
            }
        }
        return strings
    }

    /// Calls `entry` with a cursor on the key of each entry of the dictionary under `reader` (none if it is not one).
    private static func dictionary(reading reader: DBusBodyReader, _ entry: (DBusBodyReader) -> Void) {
        guard reader.elementTypeCode == UInt8(ascii: "e") else { return }
        _ = reader.withContents { entries in
            while entries.typeCode != nil {
                _ = entries.withContents(entry)
                entries.next()
            }
        }
    }

    /// The tree delta a BlueZ signal carries (InterfacesAdded,
    /// InterfacesRemoved, PropertiesChanged), or nil for any other signal or
    /// a malformed one. Read straight from the message.
    public static func delta(of signal: DBusMessage) -> ObjectTreeDelta? {
        switch (signal.interface, signal.member, signal.signature.rawValue) {
        case (BlueZNames.objectManager, "InterfacesAdded", "oa{sa{sv}}"):
            return signal.withBodyReader { body -> ObjectTreeDelta? in
                guard let path = body.string(), body.next() else { return nil }
                return .interfacesAdded(path: path, interfaces: interfaces(reading: body))
            }
        case (BlueZNames.objectManager, "InterfacesRemoved", "oas"):
            return signal.withBodyReader { body -> ObjectTreeDelta? in
                guard let path = body.string(), body.next() else { return nil }
                return .interfacesRemoved(path: path, interfaces: strings(reading: body))
            }
        case (BlueZNames.properties, "PropertiesChanged", "sa{sv}as"):
            guard let path = signal.path?.rawValue else { return nil }
            return signal.withBodyReader { body -> ObjectTreeDelta? in
                guard let interface = body.string(in: names), body.next() else { return nil }
                let changed = properties(reading: body)
                guard body.next() else { return nil }
                return .propertiesChanged(
                    path: path, interface: interface, changed: changed, invalidated: strings(reading: body))
            }
        default:
            return nil
        }
    }
}
