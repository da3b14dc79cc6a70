import GATT

extension BlueZInterface {
    /// `org.bluez.Battery1` (battery-api.txt), served by bluetoothd's battery plugin.
    public static let battery = "org.bluez.Battery1"
}

/// bluetoothd 5.66's battery plugin (profiles/battery/battery.c): once a device's services are
/// resolved, it reads the Battery Level (0x2A19) of its Battery Service (0x180F), subscribes to it
/// (a CCC write, when there is a CCC), and shows `Battery1` on the device object with
/// `Percentage` the first byte; each notification updates it; the link going down removes it.
extension SimWorld {
    static let batteryService = BluetoothUUID(uuid16: 0x180F)
    static let batteryLevel = BluetoothUUID(uuid16: 0x2A19)

    /// The Battery Level characteristic of `server`'s first Battery Service.
    static func batteryLevel(in server: GATTServer) -> GATTServer.Characteristic? {
        server.services.first { $0.uuid == batteryService }?.characteristics.first { $0.uuid == batteryLevel }
    }

    /// The Battery Level the plugin would read on the link `adapter` -> `address` when the peer
    /// is a local application: its value handle and the application attribute (the shell calls
    /// the application's ReadValue, then `batteryRead`). Nil when the peer has none, or is not
    /// an application.
    public func localBatteryLevel(adapter: Int, address: DeviceAddress) -> (UInt16, LocalAttribute)? {
        let key = LinkKey(adapter: adapter, address: address)
        guard let link = links[key], link.connected, link.battery == nil, let server = servers[link.device],
            let chrc = Self.batteryLevel(in: server), chrc.flags.properties.contains(.read),
            let local = localPeripherals.values.first(where: { $0.device == link.device }),
            let attribute = local.attributes[chrc.valueHandle]
        else { return nil }
        return (chrc.valueHandle, attribute)
    }

    /// The plugin read `value` from the Battery Level: with a non-empty value it subscribes
    /// (when the characteristic has a CCC) and `Battery1` appears. Returns the events and
    /// whether the subscription turned the link's CCC on (then a local application is told, as
    /// for any CCC write).
    public mutating func batteryRead(adapter: Int, address: DeviceAddress, value: [UInt8]) -> ([Batch], Bool) {
        let key = LinkKey(adapter: adapter, address: address)
        guard var link = links[key], link.connected, link.battery == nil, !value.isEmpty,
            let server = servers[link.device], let chrc = Self.batteryLevel(in: server)
        else { return ([], false) }
        let handle = chrc.valueHandle
        let enabling = chrc.canSubscribe && !link.isSubscribed(handle)
        link.battery = handle
        link.batterySubscribed = chrc.canSubscribe
        link.batteryPercentage = value[0]
        links[key] = link
        var properties: [Property] = []
        // battery.c: Percentage exists only for 0...100; Source is an experimental property.
        if value[0] <= 100 { properties.append(Property("Percentage", .byte(value[0]))) }
        if adapters[adapter].experimental {
            properties.append(Property("Source", .string("GATT Battery Service")))
        }
        let event = AdapterEvent.objectAdded(
            path: adapters[adapter].devicePath(address), interface: BlueZInterface.battery, properties: properties)
        return ([Batch(adapter: adapter, events: [event])], enabling)
    }

    /// For a scenario device (its value is known here): the plugin's read and subscription.
    mutating func batteryProbe(adapter: Int, address: DeviceAddress) -> [Batch] {
        let key = LinkKey(adapter: adapter, address: address)
        guard let link = links[key], let server = servers[link.device],
            !localPeripherals.values.contains(where: { $0.device == link.device }),
            let chrc = Self.batteryLevel(in: server), let value = try? server.read(chrc.valueHandle)
        else { return [] }
        return batteryRead(adapter: adapter, address: address, value: value).0
    }

    /// A notification of `value` on the link's Battery Level: `Percentage` changes (battery.c
    /// ignores an unchanged level and one above 100).
    mutating func batteryNotified(_ key: LinkKey, _ valueHandle: UInt16, _ value: [UInt8]) -> [AdapterEvent] {
        guard var link = links[key], link.batterySubscribed, link.battery == valueHandle, let level = value.first,
            level != link.batteryPercentage
        else { return [] }
        link.batteryPercentage = level
        links[key] = link
        guard level <= 100 else { return [] }
        return [
            .objectChanged(
                path: adapters[key.adapter].devicePath(key.address), interface: BlueZInterface.battery,
                changed: [Property("Percentage", .byte(level))], invalidated: [])
        ]
    }

    /// The link went down: the plugin unregisters `Battery1`.
    mutating func batteryLost(_ key: LinkKey) -> [AdapterEvent] {
        guard var link = links[key], link.battery != nil else { return [] }
        link.battery = nil
        link.batterySubscribed = false
        link.batteryPercentage = nil
        links[key] = link
        return [
            .objectRemoved(
                path: adapters[key.adapter].devicePath(key.address), interfaces: [BlueZInterface.battery])
        ]
    }
}
