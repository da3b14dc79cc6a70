import GATT

/// StartNotify / StopNotify / AcquireNotify / AcquireWrite with gatt-client.c's sessions: one
/// per client bus name, Notifying true while any StartNotify session exists.
extension SimWorld {
    private mutating func subscription(_ path: String) throws(BlueZError) -> (Located, GATTServer.Characteristic) {
        let located = try locate(attribute: path)
        guard case .characteristic(let handle) = located.target,
            let chrc = located.server.characteristic(valueHandle: handle)
        else { throw BluetoothdError.notSupported }
        return (located, chrc)
    }

    private func notifyingChanged(_ located: Located, _ name: String, _ on: Bool) -> [Batch] {
        [
            Batch(
                adapter: located.key.adapter,
                events: [
                    .objectChanged(
                        path: located.path, interface: BlueZInterface.gattCharacteristic,
                        changed: [Property(name, .bool(on))], invalidated: [])
                ])
        ]
    }

    /// StartNotify for `owner`: `NotPermitted "Notify acquired"`, `NotSupported` without
    /// notify/indicate; a second call of the same client succeeds without effect. The first
    /// session sets Notifying true.
    public mutating func startNotify(path: String, owner: String) throws(BlueZError) -> [Batch] {
        var (located, chrc) = try subscription(path)
        guard located.link.notifyAcquired[chrc.valueHandle] == nil else {
            throw BlueZError(.notPermitted, "Notify acquired")
        }
        guard chrc.canSubscribe else { throw BluetoothdError.notSupported }
        var owners = located.link.notifyClients[chrc.valueHandle] ?? []
        guard !owners.contains(owner) else { return [] }
        owners.append(owner)
        located.link.notifyClients[chrc.valueHandle] = owners
        links[located.key] = located.link
        guard located.link.connected else { return [] }
        return owners.count == 1 ? notifyingChanged(located, "Notifying", true) : []
    }

    /// StopNotify for `owner`: releases an AcquireNotify socket if there is one, else ends the
    /// caller's session (`Failed "No notify session started"` without one); the last session
    /// sets Notifying false.
    public mutating func stopNotify(path: String, owner: String) throws(BlueZError) -> [Batch] {
        var (located, chrc) = try subscription(path)
        if located.link.notifyAcquired[chrc.valueHandle] != nil {
            return releaseNotify(path: path)
        }
        var owners = located.link.notifyClients[chrc.valueHandle] ?? []
        guard let index = owners.firstIndex(of: owner) else {
            throw BluetoothdError.failed("No notify session started")
        }
        owners.remove(at: index)
        located.link.notifyClients[chrc.valueHandle] = owners.isEmpty ? nil : owners
        links[located.key] = located.link
        return owners.isEmpty && located.link.connected ? notifyingChanged(located, "Notifying", false) : []
    }

    /// AcquireNotify: `Failed "Not connected"`, `NotPermitted "Notify acquired"`, `InProgress`
    /// while StartNotify sessions exist, `NotSupported` without notify. Returns the MTU; the
    /// shell creates the socket and reports NotifyAcquired true.
    public mutating func acquireNotify(path: String, owner: String) throws(BlueZError) -> (mtu: UInt16, [Batch]) {
        var (located, chrc) = try subscription(path)
        guard located.link.connected else { throw BluetoothdError.failed("Not connected") }
        guard located.link.notifyAcquired[chrc.valueHandle] == nil else {
            throw BlueZError(.notPermitted, "Notify acquired")
        }
        guard (located.link.notifyClients[chrc.valueHandle] ?? []).isEmpty else { throw BluetoothdError.inProgress }
        guard chrc.flags.properties.contains(.notify) else { throw BluetoothdError.notSupported }
        located.link.notifyAcquired[chrc.valueHandle] = owner
        links[located.key] = located.link
        return (located.link.mtu, notifyingChanged(located, "NotifyAcquired", true))
    }

    /// The AcquireNotify socket was closed (by the client, or by StopNotify).
    public mutating func releaseNotify(path: String) -> [Batch] {
        guard var located = try? locate(attribute: path), case .characteristic(let handle) = located.target,
            located.link.notifyAcquired.removeValue(forKey: handle) != nil
        else { return [] }
        links[located.key] = located.link
        return notifyingChanged(located, "NotifyAcquired", false)
    }

    /// AcquireWrite: `Failed "Not connected"`, `NotPermitted "Write acquired"`, `NotSupported`
    /// without write-without-response. Returns the MTU.
    public mutating func acquireWrite(path: String) throws(BlueZError) -> (mtu: UInt16, [Batch]) {
        var (located, chrc) = try subscription(path)
        guard located.link.connected else { throw BluetoothdError.failed("Not connected") }
        guard !located.link.writeAcquired.contains(chrc.valueHandle) else {
            throw BlueZError(.notPermitted, "Write acquired")
        }
        guard chrc.flags.properties.contains(.writeWithoutResponse) else { throw BluetoothdError.notSupported }
        located.link.writeAcquired.insert(chrc.valueHandle)
        links[located.key] = located.link
        return (located.link.mtu, notifyingChanged(located, "WriteAcquired", true))
    }

    /// The AcquireWrite socket was closed.
    public mutating func releaseWrite(path: String) -> [Batch] {
        guard var located = try? locate(attribute: path), case .characteristic(let handle) = located.target,
            located.link.writeAcquired.remove(handle) != nil
        else { return [] }
        links[located.key] = located.link
        return notifyingChanged(located, "WriteAcquired", false)
    }

    /// A packet from an AcquireWrite socket: a Write Command (errors are not reported). Returns
    /// the seconds until the link takes the next one (0 without a link model): the socket's next
    /// packet stays unread that long, so a writer faster than the link fills the socket.
    @discardableResult
    public mutating func socketWrite(path: String, _ bytes: [UInt8]) -> Double {
        guard let located = try? locate(attribute: path), located.link.connected,
            case .characteristic(let handle) = located.target, var server = servers[located.link.device]
        else { return 0 }
        if pace(located.key, handle, bytes) { return links[located.key]?.pacedWrites.wait(at: clock) ?? 0 }
        if (try? server.write(handle, bytes)) != nil { servers[located.link.device] = server }
        return 0
    }

    /// Under a link model, queues a write command on link `key` to reach the device at the
    /// link's rate (true); false without a link model (write it now). A virtual payment
    /// terminal's writes are never queued (its logic answers them at once).
    mutating func pace(_ key: LinkKey, _ handle: UInt16, _ bytes: [UInt8]) -> Bool {
        guard let model = linkModel, var link = links[key], terminals[link.device] == nil else { return false }
        let rate = model.maxPerSecond(valueLength: bytes.count, mtu: link.mtu)
        link.pacedWrites.enqueue(handle: handle, bytes: bytes, at: clock, seconds: 1 / rate)
        links[key] = link
        return true
    }

    /// Queued write commands that reach their device by `now` are written (errors not reported).
    mutating func deliverPacedWrites(through now: SimInstant) {
        for key in links.keys where links[key]?.pacedWrites.nextDeadline.map({ $0 <= now }) == true {
            guard var link = links[key] else { continue }
            let due = link.pacedWrites.due(through: now)
            links[key] = link
            guard link.connected, var server = servers[link.device] else { continue }
            for write in due { _ = try? server.write(write.handle, write.bytes) }
            servers[link.device] = server
        }
    }

    /// When the next queued write command reaches its device.
    var nextPacedWrite: SimInstant? { links.values.compactMap(\.pacedWrites.nextDeadline).min() }

    /// A client left the bus: its StartNotify sessions end.
    public mutating func clientLeftGATT(owner: String) -> [Batch] {
        var batches: [Batch] = []
        for key in links.keys.sorted(by: { ($0.adapter, $0.address) < ($1.adapter, $1.address) }) {
            guard let link = links[key], let server = servers[link.device] else { continue }
            for (handle, owners) in link.notifyClients where owners.contains(owner) {
                guard
                    let path = GATTObjects.characteristicPath(
                        valueHandle: handle, devicePath: adapters[key.adapter].devicePath(key.address), in: server)
                else { continue }
                batches += (try? stopNotify(path: path, owner: owner)) ?? []
            }
        }
        return batches
    }
}
