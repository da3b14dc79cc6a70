/// What a change of the mirrored tree means to ``CentralManager``. The
/// mirror is a copy of BlueZ's object tree; its interface and property names
/// are read here, beside the mirror, so the manager's own code speaks of
/// devices, links and characteristics.
enum TreeEvent: Hashable, Sendable {
    /// A device appeared.
    case deviceAdded(path: String)
    /// A device's properties changed (``DeviceKeys`` says which kind).
    case deviceChanged(path: String, keys: DeviceKeys)
    /// A device went away.
    case deviceRemoved(path: String)
    /// A characteristic's value changed (a notification through StartNotify, or a read).
    case characteristicValueChanged(path: String)
    /// A service or characteristic appeared or went away.
    case attributesChanged
    /// The mirror does not hold the object a signal was about: read it again.
    case needsRefresh(path: String, interface: String)
    /// Nothing the manager acts on.
    case other
}

/// The properties of a device that changed, asked what they touch only when
/// the manager needs to know (an advertisement report skips the first question).
struct DeviceKeys: Hashable, Sendable {
    /// The names of the changed properties.
    let names: [String]

    /// Whether its advertisement changed.
    var advertised: Bool { names.contains(where: ObjectTreeChange.advertisingKeys.contains) }

    /// Whether its link or the resolution of its services changed.
    var link: Bool { names.contains("Connected") || names.contains("ServicesResolved") }
}

extension ObjectTreeChange {
    /// The device properties that come with an advertisement report.
    static let advertisingKeys: Set<String> = ["RSSI", "ManufacturerData", "ServiceData", "UUIDs", "Name", "TxPower"]

    /// What the change means to the manager (a few comparisons of the interface name, no allocation).
    var meaning: TreeEvent {
        switch self {
        case .added(let path, BlueZInterface.device):
            return .deviceAdded(path: path)
        case .changed(let path, BlueZInterface.device, let keys):
            return .deviceChanged(path: path, keys: DeviceKeys(names: keys))
        case .removed(let path, BlueZInterface.device):
            return .deviceRemoved(path: path)
        case .changed(let path, BlueZInterface.gattCharacteristic, let keys) where keys.contains("Value"):
            return .characteristicValueChanged(path: path)
        case .added(_, let interface), .removed(_, let interface):
            return interface == BlueZInterface.gattCharacteristic || interface == BlueZInterface.gattService
                ? .attributesChanged : .other
        case .needsRefresh(let path, let interface):
            return .needsRefresh(path: path, interface: interface)
        case .changed:
            return .other
        }
    }
}

extension ObjectTreeDelta {
    /// The device this delta is an advertisement report of (its advertising
    /// properties changed), if it is one.
    var advertisingDevice: String? {
        guard case .propertiesChanged(let path, BlueZInterface.device, let changed, _) = self,
            changed.keys.contains(where: ObjectTreeChange.advertisingKeys.contains)
        else { return nil }
        return path
    }
}

extension ObjectTreeMirror {
    /// The value of the characteristic at `path` when it notifies through
    /// StartNotify (a read also changes the value: nil unless notifying).
    func notifiedValue(ofCharacteristicAt path: String) -> [UInt8]? {
        guard let properties = objects[path]?[BlueZInterface.gattCharacteristic],
            properties["Notifying"]?.boolValue == true
        else { return nil }
        return properties["Value"]?.bytesValue
    }
}
