import GATT

/// The central as the peripheral adapter's bluetoothd sees it: an incoming LE connection makes a
/// Device1 under the peripheral adapter (adapter.c's `connected_callback` creates it, temporary,
/// then `Connected` true), and bluetoothd's reverse service discovery (main.conf's
/// `ReverseServiceDiscovery`, default true) resolves the central's own GATT database
/// (`ServicesResolved` true, its primary services in `UUIDs`). The link going down sets both false.
extension SimWorld {
    /// A central (`address`) connected to adapter `peripheral`'s applications.
    mutating func centralArrived(peripheral: Int, address: DeviceAddress, addressType: AddressType) -> [Batch] {
        guard adapters.indices.contains(peripheral) else { return [] }
        var events: [AdapterEvent] = []
        var device = adapters[peripheral].devices[address] ?? RemoteDevice(address: address, addressType: addressType)
        if adapters[peripheral].devices[address] == nil {
            adapters[peripheral].devices[address] = device
            events.append(
                .deviceAdded(
                    address,
                    device.properties(
                        adapterPath: adapters[peripheral].path, experimental: adapters[peripheral].experimental)))
        }
        guard !device.connected else { return [Batch(adapter: peripheral, events: events)] }
        device.connected = true
        adapters[peripheral].devices[address] = device
        events.append(.deviceChanged(address, changed: [Property("Connected", .bool(true))], invalidated: []))
        return [Batch(adapter: peripheral, events: events)]
    }

    /// Reverse service discovery on the central finished: `ServicesResolved` true, and `UUIDs`
    /// gains the central's primary services.
    mutating func centralResolved(peripheral: Int, address: DeviceAddress, services: [String]) -> [Batch] {
        guard adapters.indices.contains(peripheral), var device = adapters[peripheral].devices[address],
            device.connected, !device.servicesResolved
        else { return [] }
        device.servicesResolved = true
        var changed = [Property("ServicesResolved", .bool(true))]
        let added = services.compactMap(BluetoothUUID.init).filter { !device.uuids.contains($0) }
        if !added.isEmpty {
            device.uuids += added
            changed.append(Property("UUIDs", .strings(device.uuids.map(\.uuidString))))
        }
        adapters[peripheral].devices[address] = device
        return [Batch(adapter: peripheral, events: [.deviceChanged(address, changed: changed, invalidated: [])])]
    }

    /// The central's link is gone: `ServicesResolved` and `Connected` false.
    mutating func centralLeft(peripheral: Int, address: DeviceAddress) -> [Batch] {
        guard adapters.indices.contains(peripheral), var device = adapters[peripheral].devices[address],
            device.connected
        else { return [] }
        var events: [AdapterEvent] = []
        if device.servicesResolved {
            events.append(
                .deviceChanged(address, changed: [Property("ServicesResolved", .bool(false))], invalidated: []))
        }
        device.servicesResolved = false
        device.connected = false
        adapters[peripheral].devices[address] = device
        events.append(.deviceChanged(address, changed: [Property("Connected", .bool(false))], invalidated: []))
        return [Batch(adapter: peripheral, events: events)]
    }

    /// The application characteristics among `handles` (value handles of `peripheral`'s
    /// database) that no central subscribes any more, as events telling their applications.
    func unsubscribed(_ handles: [UInt16], peripheral: Int) -> [AdapterEvent] {
        guard let local = localPeripherals[peripheral] else { return [] }
        return handles.compactMap { handle in
            guard let attribute = local.attributes[handle],
                !links.values.contains(where: { $0.device == local.device && $0.connected && $0.isSubscribed(handle) }),
                !(virtualCentral.connected.contains(peripheral)
                    && virtualCentral.subscribed[peripheral]?.contains(handle) == true)
            else { return nil }
            return .applicationUnsubscribed(owner: attribute.owner, path: attribute.path)
        }
    }

    /// The adapter whose peripheral role is the virtual device `index` (nil for scenario devices).
    func peripheralAdapter(ofDevice index: Int) -> Int? {
        localPeripherals.first { $0.value.device == index }?.key
    }

    /// The primary services adapter `central`'s bluetoothd serves (GAP, GATT, Device
    /// Information, then its applications'): what reverse discovery finds on it.
    func servedUUIDs(of central: Int) -> [String] {
        let applications =
            localPeripherals[central].flatMap { local in servers[local.device] }?.services
            .dropFirst(BluetoothdCoreServices.services.count).filter(\.primary).map(\.uuid.uuidString) ?? []
        return SimAdapter.localUUIDs + applications
    }

    /// GAP and GATT: what reverse discovery finds on the virtual central.
    static let virtualCentralUUIDs = [
        "00001800-0000-1000-8000-00805f9b34fb", "00001801-0000-1000-8000-00805f9b34fb",
    ]
}
