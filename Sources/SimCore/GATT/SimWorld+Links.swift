import GATT

/// Where a link is: an adapter and a device address.
public struct LinkKey: Hashable, Sendable {
    /// The adapter index.
    public var adapter: Int
    /// The device address.
    public var address: DeviceAddress

    /// A key.
    public init(adapter: Int, address: DeviceAddress) {
        self.adapter = adapter
        self.address = address
    }
}

/// What a Connect leads to.
public enum ConnectOutcome: Sendable, Equatable {
    /// Already connected: reply at once.
    case alreadyConnected
    /// The link comes up after `delay` seconds (then call `completeConnect`).
    case connects(delay: Double)
    /// Fails with `error` after `delay` seconds (bluetoothd waits for the kernel's timeout).
    case fails(BlueZError, delay: Double)
    /// The device is not heard now. The kernel keeps listening for its advertisement and
    /// connects as soon as it hears one (ask ``SimWorld/beginConnect(adapter:address:at:)``
    /// again as time passes); after `seconds` it gives up and the call fails with `error`.
    case waits(BlueZError, seconds: Double)
}

/// Connections and remote GATT (bluetoothd's device.c and gatt-client.c).
extension SimWorld {
    /// bluetoothd's error when the LE connection cannot be made.
    public static let connectionAbort = BluetoothdError.failed("le-connection-abort-by-local")

    /// The virtual device with `address`.
    public func deviceIndex(_ address: DeviceAddress) -> Int? { devices.firstIndex { $0.address == address } }

    /// Device1.Connect: NotReady while powered off, DoesNotExist for an unknown device; a device
    /// that is silenced, not connectable or out of range is waited for: it connects if it is heard
    /// within `connectFailSeconds` (a peripheral between two advertisements, or re-registering its
    /// advertisement), and fails after that, as the kernel's LE connection attempt does.
    ///
    /// An injected `timeout` is a peer that never completes the connection: bluetoothd 5.66
    /// answers it as it answers an unreachable device, Failed "le-connection-abort-by-local"
    /// once the kernel gives up (about 40 s on the VM, docs/conformance.md item 11; here
    /// `connectFailSeconds`, short in tests), never by leaving the call unanswered.
    public mutating func beginConnect(
        adapter: Int, address: DeviceAddress, at now: SimInstant
    ) throws(BlueZError)
        -> ConnectOutcome
    {
        guard adapters.indices.contains(adapter), let device = adapters[adapter].devices[address] else {
            throw BluetoothdError.doesNotExist
        }
        guard adapters[adapter].powered else { throw BluetoothdError.notReady }
        if device.connected { return .alreadyConnected }
        let delay = faults.delay(for: address)
        switch faults.take(address: address, uuid: nil) {
        case .timeout?: return .fails(Self.connectionAbort, delay: connectFailSeconds + delay)
        case .error(let error)?: return .fails(error, delay: delay)
        case nil: break
        }
        guard let index = deviceIndex(address), reachable(index, from: adapter, at: now) else {
            return .waits(Self.connectionAbort, seconds: connectFailSeconds + delay)
        }
        return .connects(delay: connectSeconds + delay)
    }

    /// Whether adapter `adapter` can connect to device `index` now: advertising connectably,
    /// not silenced, heard above the adapter's sensitivity (without noise).
    public func reachable(_ index: Int, from adapter: Int, at now: SimInstant) -> Bool {
        let device = devices[index]
        guard device.connectable, !silenced.contains(index), !offAir.contains(index) else { return false }
        let spec = adapters[adapter].spec
        return device.radio.meanRSSI(observer: spec.position, at: now) >= Double(spec.sensitivity)
    }

    /// The link comes up: `Connected` true (not signalled after ``Fault/unsignalledConnect(_:)``).
    /// Services are resolved next (`resolveServices`).
    public mutating func completeConnect(adapter: Int, address: DeviceAddress) -> [Batch] {
        guard adapters.indices.contains(adapter), var device = adapters[adapter].devices[address], !device.connected,
            let index = deviceIndex(address)
        else { return [] }
        device.connected = true
        adapters[adapter].devices[address] = device
        let key = LinkKey(adapter: adapter, address: address)
        var link = links[key] ?? GATTLink(device: index, mtu: mtu)
        link.connected = true
        link.generation &+= 1
        link.mtu = mtu
        link.budget = linkModel.map { _ in LinkBudget(tokens: 1, at: clock) }
        links[key] = link
        schedule.linkUp(address, at: clock)
        let connected = [Property("Connected", .bool(true))]
        var batches = [
            Batch(
                adapter: adapter,
                events: [
                    faults.unsignalledConnects.remove(address) == nil
                        ? .deviceChanged(address, changed: connected, invalidated: [])
                        : .deviceChangedSilently(address, changed: connected)
                ])
        ]
        if let peripheral = peripheralAdapter(ofDevice: index), peripheral != adapter {
            let spec = adapters[adapter].spec
            batches += centralArrived(peripheral: peripheral, address: spec.address, addressType: spec.addressType)
        }
        return batches
    }

    /// Service discovery finished: the GATT objects appear (first connection only; bluetoothd
    /// keeps them across reconnections), then `ServicesResolved` true.
    public mutating func resolveServices(adapter: Int, address: DeviceAddress) -> [Batch] {
        let key = LinkKey(adapter: adapter, address: address)
        guard var link = links[key], link.connected, var device = adapters[adapter].devices[address],
            !device.servicesResolved
        else { return [] }
        var events: [AdapterEvent] = []
        let devicePath = adapters[adapter].devicePath(address)
        if !link.resolved, let server = servers[link.device] {
            link.resolved = true
            links[key] = link
            events += GATTObjects.objects(of: server, devicePath: devicePath, link: link).map {
                .objectAdded(path: $0.path, interface: $0.interface, properties: $0.properties)
            }
        } else if let server = servers[link.device] {
            events += mtuEvents(server, devicePath, link)
        }
        link.resolved = true
        links[key] = link
        device.servicesResolved = true
        var changed = [Property("ServicesResolved", .bool(true))]
        // bluetoothd adds the primary services' UUIDs to the device's UUIDs.
        // An adapter's peripheral role also has GAP, which BlueZ's client hides from D-Bus.
        let gap = peripheralAdapter(ofDevice: link.device) == nil ? [] : [BluetoothdCoreServices.gapUUID]
        let found = gap + (servers[link.device]?.services.filter(\.primary).map(\.uuid) ?? [])
        let added = found.filter { !device.uuids.contains($0) }
        if !added.isEmpty {
            device.uuids += added
            changed.append(Property("UUIDs", .strings(device.uuids.map(\.uuidString))))
        }
        adapters[adapter].devices[address] = device
        events.append(.deviceChanged(address, changed: changed, invalidated: []))
        var batches = [Batch(adapter: adapter, events: events)]
        if let peripheral = peripheralAdapter(ofDevice: link.device), peripheral != adapter {
            batches += centralResolved(
                peripheral: peripheral, address: adapters[adapter].spec.address, services: servedUUIDs(of: adapter))
        }
        return batches + batteryProbe(adapter: adapter, address: address)
    }

    private func mtuEvents(_ server: GATTServer, _ devicePath: String, _ link: GATTLink) -> [AdapterEvent] {
        server.services.flatMap(\.characteristics).compactMap { chrc in
            GATTObjects.characteristicPath(valueHandle: chrc.valueHandle, devicePath: devicePath, in: server).map {
                .objectChanged(
                    path: $0, interface: BlueZInterface.gattCharacteristic,
                    changed: [Property("MTU", .uint16(link.mtu))],
                    invalidated: [])
            }
        }
    }

    /// Device1.Disconnect, first half: `ServicesResolved` false (before the reply). Nothing when
    /// not connected (bluetoothd replies at once).
    public mutating func beginDisconnect(adapter: Int, address: DeviceAddress) -> [Batch] {
        guard adapters.indices.contains(adapter), var device = adapters[adapter].devices[address], device.connected,
            device.servicesResolved
        else { return [] }
        device.servicesResolved = false
        adapters[adapter].devices[address] = device
        return [
            Batch(
                adapter: adapter,
                events: [
                    .deviceChanged(address, changed: [Property("ServicesResolved", .bool(false))], invalidated: [])
                ])
        ]
    }

    /// The link is gone (Disconnect's second half, a dropped link, power off): notification
    /// sessions end (Notifying false), acquired sockets are released, `ServicesResolved` and
    /// `Connected` go false. The GATT objects stay, as bluetoothd keeps its cache.
    public mutating func linkLost(adapter: Int, address: DeviceAddress) -> [Batch] {
        let key = LinkKey(adapter: adapter, address: address)
        guard adapters.indices.contains(adapter), var device = adapters[adapter].devices[address], device.connected
        else { return [] }
        var central: [Batch] = []
        var subscribed: [UInt16] = []
        if let link = links[key], let peripheral = peripheralAdapter(ofDevice: link.device) {
            if peripheral != adapter {
                central = centralLeft(peripheral: peripheral, address: adapters[adapter].spec.address)
            }
            let handles = Set(link.notifyClients.keys).union(link.notifyAcquired.keys)
                .union(link.batterySubscribed ? link.battery.map { [$0] } ?? [] : [])
            subscribed = handles.filter { link.isSubscribed($0) }.sorted()
        }
        var events = batteryLost(key)
        if var link = links[key] {
            let devicePath = adapters[adapter].devicePath(address)
            if let server = servers[link.device] {
                for (handle, owners) in link.notifyClients.sorted(by: { $0.key < $1.key }) where !owners.isEmpty {
                    if let path = GATTObjects.characteristicPath(
                        valueHandle: handle, devicePath: devicePath, in: server)
                    {
                        events.append(
                            .objectChanged(
                                path: path, interface: BlueZInterface.gattCharacteristic,
                                changed: [Property("Notifying", .bool(false))], invalidated: []))
                    }
                }
                for handle in link.notifyAcquired.keys.sorted() {
                    if let path = GATTObjects.characteristicPath(
                        valueHandle: handle, devicePath: devicePath, in: server)
                    {
                        events.append(
                            .objectChanged(
                                path: path, interface: BlueZInterface.gattCharacteristic,
                                changed: [Property("NotifyAcquired", .bool(false))], invalidated: []))
                    }
                }
                for handle in link.writeAcquired.sorted() {
                    if let path = GATTObjects.characteristicPath(
                        valueHandle: handle, devicePath: devicePath, in: server)
                    {
                        events.append(
                            .objectChanged(
                                path: path, interface: BlueZInterface.gattCharacteristic,
                                changed: [Property("WriteAcquired", .bool(false))], invalidated: []))
                    }
                }
            }
            link.connected = false
            link.notifyClients = [:]
            link.notifyAcquired = [:]
            link.writeAcquired = []
            link.reads = [:]
            link.writes = []
            links[key] = link
        }
        if device.servicesResolved {
            events.append(
                .deviceChanged(address, changed: [Property("ServicesResolved", .bool(false))], invalidated: []))
        }
        device.servicesResolved = false
        device.connected = false
        adapters[adapter].devices[address] = device
        events.append(.deviceChanged(address, changed: [Property("Connected", .bool(false))], invalidated: []))
        if let device = links[key]?.device, let peripheral = peripheralAdapter(ofDevice: device) {
            events += unsubscribed(subscribed, peripheral: peripheral)
        }
        return [Batch(adapter: adapter, events: events)] + central
    }

    /// Every live link of device `address`, on any adapter.
    public func links(of address: DeviceAddress) -> [LinkKey] {
        links.filter { $0.key.address == address && $0.value.connected }.map(\.key).sorted { $0.adapter < $1.adapter }
    }

    /// Sets an adapter's `Powered`: powering off drops its links first.
    public mutating func setPowered(adapter: Int, _ on: Bool) -> [Batch] {
        guard adapters.indices.contains(adapter) else { return [] }
        var batches: [Batch] = []
        if !on {
            let (released, dropped) = peripheralPoweredOff(adapter)
            batches += dropped
            if let released {
                batches.append(
                    Batch(
                        adapter: adapter,
                        events: [.advertisementReleased(owner: released.owner, path: released.path)]))
            }
            for key in links.keys.filter({ $0.adapter == adapter }).sorted(by: { $0.address < $1.address }) {
                batches += linkLost(adapter: adapter, address: key.address)
            }
        }
        let events = removingGATT(adapter: adapter, adapters[adapter].setPowered(on))
        if !events.isEmpty { batches.append(Batch(adapter: adapter, events: events)) }
        return batches
    }

    /// Device objects being removed take their GATT objects with them (InterfacesRemoved first).
    mutating func removingGATT(adapter: Int, _ events: [AdapterEvent]) -> [AdapterEvent] {
        events.flatMap { event -> [AdapterEvent] in
            guard case .deviceRemoved(let address) = event else { return [event] }
            let key = LinkKey(adapter: adapter, address: address)
            guard let link = links.removeValue(forKey: key), link.resolved, let server = servers[link.device] else {
                return [event]
            }
            let devicePath = adapters[adapter].devicePath(address)
            let objects = GATTObjects.objects(of: server, devicePath: devicePath, link: link)
            return objects.reversed().map { .objectRemoved(path: $0.path, interfaces: [$0.interface]) } + [event]
        }
    }

    /// Runs the devices' value behaviours to `now`: every change reaches each link's subscribed
    /// clients (Value PropertiesChanged, or the AcquireNotify socket).
    mutating func advanceServers(to now: SimInstant) -> [(Int, [AdapterEvent])] {
        var out: [(Int, [AdapterEvent])] = []
        for index in servers.keys.sorted() {
            guard var server = servers[index] else { continue }
            let changes = server.advanceTimed(to: now)
            servers[index] = server
            guard !changes.isEmpty else { continue }
            for key in links(of: devices[index].address) {
                var events: [AdapterEvent] = []
                for change in changes {
                    events += notify(key, server, change.valueHandle, change.value, at: change.at)
                }
                if !events.isEmpty { out.append((key.adapter, events)) }
            }
        }
        return out
    }

    /// A notification of `value` on `valueHandle` over link `key`.
    mutating func notify(
        _ key: LinkKey, _ server: GATTServer, _ valueHandle: UInt16, _ value: [UInt8], at time: SimInstant? = nil
    ) -> [AdapterEvent] {
        guard var link = links[key], link.connected, link.resolved,
            let path = GATTObjects.characteristicPath(
                valueHandle: valueHandle, devicePath: adapters[key.adapter].devicePath(key.address), in: server)
        else { return [] }
        let subscribed = link.notifyAcquired[valueHandle] != nil || link.isNotifying(valueHandle)
        if subscribed, let model = linkModel, var budget = link.budget {
            // Over the link's physical rate the value is not sent (the device's queue is full).
            let sent = budget.take(model, valueLength: value.count, mtu: link.mtu, at: time ?? clock)
            link.budget = budget
            links[key] = link
            guard sent else { return [] }
        }
        var events = batteryNotified(key, valueHandle, value)
        if link.notifyAcquired[valueHandle] != nil { events.append(.socketNotification(path: path, value: value)) }
        if link.isNotifying(valueHandle) {
            link.cache[valueHandle] = value
            links[key] = link
            events.append(
                .objectChanged(
                    path: path, interface: BlueZInterface.gattCharacteristic,
                    changed: [Property("Value", .bytes(value))],
                    invalidated: []))
        }
        return events
    }
}
