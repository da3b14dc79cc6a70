import DBus
import GATT
import SimCore

/// SimCore's values in D-Bus form, and D-Bus arguments in SimCore's form.
enum DBusMapping {
    /// The variant content for a property value (the signature in `PropertyValue`'s doc).
    static func value(_ value: PropertyValue) -> DBusValue {
        switch value {
        case .bool(let flag): .boolean(flag)
        case .byte(let number): .byte(number)
        case .string(let text): .string(text)
        case .objectPath(let path): (try? ObjectPath(path)).map(DBusValue.objectPath) ?? .string(path)
        case .int16(let number): .int16(number)
        case .uint16(let number): .uint16(number)
        case .uint32(let number): .uint32(number)
        case .strings(let texts): .array(.string, texts.map(DBusValue.string))
        case .objectPaths(let paths):
            .array(.objectPath, paths.compactMap { try? ObjectPath($0) }.map(DBusValue.objectPath))
        case .bytes(let bytes): .bytes(bytes)
        case .manufacturerData(let data):
            .dictionary(
                key: .uint16, value: .variant,
                data.map { (key: DBusValue.uint16($0.company), value: DBusValue.variant(.bytes($0.data))) })
        case .serviceData(let data):
            .dictionary(
                key: .string, value: .variant,
                data.map { (key: DBusValue.string($0.uuid.uuidString), value: DBusValue.variant(.bytes($0.data))) })
        }
    }

    /// An `a{sv}` of properties.
    static func dictionary(_ properties: [Property]) -> DBusValue {
        .dictionary(
            key: .string, value: .variant,
            properties.map { (key: DBusValue.string($0.name), value: DBusValue.variant(value($0.value))) })
    }

    /// One SetDiscoveryFilter value as SimCore reads it.
    static func filterArgument(_ value: DBusValue) -> FilterArgument {
        switch value.unwrapped {
        case .string(let text): .string(text)
        case .int16(let number): .int16(number)
        case .uint16(let number): .uint16(number)
        case .boolean(let flag): .bool(flag)
        case .array(.string, let items): .strings(items.compactMap(\.stringValue))
        case let other: .other(signature: other.signature)
        }
    }

    /// A bluetoothd error as the D-Bus error to reply with.
    static func error(_ error: BlueZError) -> DBusError {
        DBusError(DBusError.Name(rawValue: error.name.rawValue), error.message ?? "")
    }

    /// The D-Bus form of one SimCore signal, applied to the exported objects (which emit it).
    static func apply(
        _ signal: BusSignal, to objects: ObjectServer, sockets: AcquiredSockets,
        export: (String, String, [Property]) throws -> Void
    ) {
        do {
            switch signal {
            case .socketNotification(let path, let value):
                sockets.send(value, path: path)
            case .advertisementReleased, .applicationUnsubscribed, .monitorDeviceFound, .monitorDeviceLost:
                break  // the server calls the application itself
            case .interfacesAdded(let path, let interfaces):
                for interface in interfaces { try export(path, interface.name, interface.properties) }
            case .interfacesRemoved(let path, let interfaces) where interfaces == [BlueZInterface.battery]:
                try objects.removeInterface(BlueZInterface.battery, at: ObjectPath(path))
            case .interfacesRemoved(let path, _):
                try objects.unexport(ObjectPath(path))
            case .propertiesSetSilently(let path, let interface, let changed):
                try objects.setProperties(
                    changed.map { ($0.name, value($0.value)) }, interface: interface, at: ObjectPath(path),
                    emitting: false)
            case .propertiesChanged(let path, let interface, let changed, let invalidated):
                let changes: [(name: String, value: DBusValue?)] =
                    changed.map { ($0.name, value($0.value)) } + invalidated.map { ($0, nil) }
                if interface == BlueZInterface.gattCharacteristic && changed.contains(where: { $0.name == "Value" }) {
                    // bluetoothd flushes a characteristic's Value at once: each notification (or read) is a
                    // signal of its own, never folded behind the reply of a call being handled.
                    try objects.setPropertiesNow(changes, interface: interface, at: ObjectPath(path))
                } else {
                    try objects.setProperties(changes, interface: interface, at: ObjectPath(path))
                }
                for (name, kind) in [("NotifyAcquired", AcquiredSockets.Kind.notify), ("WriteAcquired", .write)]
                where changed.contains(Property(name, .bool(false))) {
                    sockets.close(kind, path: path)
                }
            }
        } catch {
            Log.error("cannot apply \(signal): \(error)")
        }
    }
}
