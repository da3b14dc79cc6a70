import GATT

/// blesim's virtual central (org.blesim.Control1's Central* methods): a central outside every
/// adapter that connects to an adapter's peripheral role, so a GATT application can be
/// exercised without a second client. Its subscriptions are kept here; its reads and writes go
/// to the application like a remote's.
public struct VirtualCentral: Sendable, Equatable {
    /// The address the applications see in the `device` option.
    public static let address = DeviceAddress(validBytes: (0xC0, 0xDE, 0x00, 0x00, 0x00, 0x01))
    /// The MTU it exchanges.
    public static let mtu: UInt16 = 247
    /// Adapters whose peripheral it is connected to.
    public internal(set) var connected: Set<Int> = []
    /// Value handles it subscribed, by adapter.
    public internal(set) var subscribed: [Int: Set<UInt16>] = [:]

    /// Not connected anywhere.
    public init() {}
}

extension SimWorld {
    /// The adapter whose peripheral `name` names: "hciN", its object path, or its address.
    public func peripheralAdapter(named name: String) -> Int? {
        adapters.firstIndex { adapter in
            adapter.path == name || adapter.path == "/org/bluez/" + name || adapter.spec.address.description == name
        }
    }

    /// CentralConnect: `Failed "le-connection-abort-by-local"` unless the adapter has a
    /// registered application (its peripheral is up); connecting twice is fine.
    public mutating func virtualConnect(adapter: Int) throws(BlueZError) -> [Batch] {
        guard let local = localPeripherals[adapter], !local.applications.isEmpty, adapters[adapter].powered else {
            throw Self.connectionAbort
        }
        guard virtualCentral.connected.insert(adapter).inserted else { return [] }
        let address = VirtualCentral.address
        return centralArrived(peripheral: adapter, address: address, addressType: .random)
            + centralResolved(peripheral: adapter, address: address, services: Self.virtualCentralUUIDs)
    }

    /// The virtual central's link to `adapter` is gone (CentralDisconnect, a database change,
    /// power off): its Device1 there shows it.
    mutating func virtualLinkLost(adapter: Int) -> [Batch] {
        virtualCentral.subscribed[adapter] = nil
        guard virtualCentral.connected.remove(adapter) != nil else { return [] }
        return centralLeft(peripheral: adapter, address: VirtualCentral.address)
    }

    /// CentralDisconnect: its subscriptions there end (returned, to StopNotify the ones no
    /// remote keeps).
    public mutating func virtualDisconnect(adapter: Int) -> ([LocalAttribute], [Batch]) {
        let handles = virtualCentral.subscribed[adapter] ?? []
        let batches = virtualLinkLost(adapter: adapter)
        let stopped = handles.sorted().compactMap { handle in
            lastSubscriber(adapter: adapter, handle: handle) ? localPeripherals[adapter]?.attributes[handle] : nil
        }
        return (stopped, batches)
    }

    /// The characteristic with `uuid` of the application(s) on `adapter`, for the virtual
    /// central: `Failed "Not connected"` without CentralConnect, `DoesNotExist` when no such
    /// characteristic.
    public func virtualTarget(
        adapter: Int, uuid: BluetoothUUID
    ) throws(BlueZError) -> (
        handle: UInt16, attribute: LocalAttribute, flags: BlueZGATTFlags.Characteristic
    ) {
        guard virtualCentral.connected.contains(adapter), let local = localPeripherals[adapter],
            let server = servers[local.device]
        else { throw BluetoothdError.failed("Not connected") }
        for service in server.services {
            for chrc in service.characteristics where chrc.uuid == uuid {
                if let attribute = local.attributes[chrc.valueHandle] {
                    return (chrc.valueHandle, attribute, chrc.flags)
                }
            }
        }
        throw BlueZError(.doesNotExist, "No such characteristic")
    }

    /// CentralSubscribe on or off: whether the application is to be told (StartNotify on each
    /// enabling, StopNotify when no remote remains subscribed).
    public mutating func virtualSubscribe(adapter: Int, handle: UInt16, _ on: Bool) -> Bool {
        var handles = virtualCentral.subscribed[adapter] ?? []
        if on {
            guard handles.insert(handle).inserted else { return false }
            virtualCentral.subscribed[adapter] = handles
            return true
        }
        guard handles.remove(handle) != nil else { return false }
        virtualCentral.subscribed[adapter] = handles.isEmpty ? nil : handles
        return lastSubscriber(adapter: adapter, handle: handle)
    }

    private func lastSubscriber(adapter: Int, handle: UInt16) -> Bool {
        guard let device = localPeripherals[adapter]?.device else { return true }
        return !links.values.contains { $0.device == device && $0.connected && $0.isSubscribed(handle) }
    }

    /// Where a Value change of the application characteristic `path` of `owner` reaches the
    /// virtual central: (adapter, characteristic UUID) for each subscription.
    public func virtualNotifications(owner: String, path: String) -> [(adapter: Int, uuid: BluetoothUUID)] {
        var out: [(adapter: Int, uuid: BluetoothUUID)] = []
        for adapter in virtualCentral.subscribed.keys.sorted() {
            guard let local = localPeripherals[adapter], let server = servers[local.device] else { continue }
            for handle in (virtualCentral.subscribed[adapter] ?? []).sorted() {
                guard let attribute = local.attributes[handle], attribute.owner == owner, attribute.path == path,
                    let chrc = server.characteristic(valueHandle: handle)
                else { continue }
                out.append((adapter, chrc.uuid))
            }
        }
        return out
    }
}
