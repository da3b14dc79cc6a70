import GATT

/// Adapter1's discovery methods and the device table, as bluetoothd 5.66 behaves.
extension SimAdapter {
    /// `StartDiscovery` from bus name `owner`: NotReady when powered off, InProgress when that
    /// client already discovers.
    public mutating func startDiscovery(owner: String) throws(BlueZError) -> [AdapterEvent] {
        guard powered else { throw BluetoothdError.notReady }
        let started = try sessions.start(owner: owner)
        var events = discoverableForFilters()
        if started {
            discovering = true
            events.append(.adapterChanged([Property("Discovering", .bool(true))]))
        }
        return events
    }

    /// `StopDiscovery` from `owner`: NotReady when powered off, Failed "No discovery started"
    /// when that client does not discover. When the last session ends, Discovering goes false,
    /// devices found lose their RSSI and TxPower, and temporary non-connectable ones go.
    public mutating func stopDiscovery(owner: String) throws(BlueZError) -> [AdapterEvent] {
        guard powered else { throw BluetoothdError.notReady }
        let stopped = try sessions.stop(owner: owner)
        return stopped ? endDiscovery() : []
    }

    /// `SetDiscoveryFilter` from `owner`: NotReady when powered off, InvalidArguments for a bad
    /// dictionary (see `DiscoveryFilter.parse`). An empty dictionary removes the filter.
    public mutating func setDiscoveryFilter(
        owner: String, _ entries: [(key: String, value: FilterArgument)]
    ) throws(BlueZError) -> [AdapterEvent] {
        guard powered else { throw BluetoothdError.notReady }
        let filter = try DiscoveryFilter.parse(entries, adapterTransport: sessions.adapterTransport)
        sessions.setFilter(filter, owner: owner)
        return discoverableForFilters()
    }

    /// The client `owner` left the bus: its session and filter go, as if it had stopped.
    public mutating func clientLeft(owner: String) -> [AdapterEvent] {
        removeMonitors(owner: owner)
        return sessions.remove(owner: owner) ? endDiscovery() : []
    }

    /// `RemoveDevice(path)`: DoesNotExist for an unknown path, NotReady when powered off.
    public mutating func removeDevice(path devicePath: String) throws(BlueZError) -> [AdapterEvent] {
        guard let device = device(atPath: devicePath) else { throw BluetoothdError.doesNotExist }
        guard powered else { throw BluetoothdError.notReady }
        return remove(device.address)
    }

    /// An advertisement heard at `now`: creates or updates the device object when the
    /// discovery sessions let it through.
    /// A report that matches an active advertisement monitor updates the device even without a
    /// discovery, and is followed by the monitor's DeviceFound (bluetoothd 5.66's `monitoring`).
    public mutating func receive(_ report: AdvertisingReport, at now: SimInstant) -> [AdapterEvent] {
        guard powered else { return [] }
        let monitored = monitorsMatching(report, at: now)
        let discovered = discovering && sessions.reports(report)
        guard discovered || monitored.matched else { return [] }
        if discovered { foundDuringDiscovery.insert(report.address) }
        return deviceReported(report, at: now, discovered: discovered) + monitored.events
    }

    private mutating func deviceReported(
        _ report: AdvertisingReport, at now: SimInstant, discovered: Bool
    ) -> [AdapterEvent] {
        let duplicate = discovered && sessions.wantsDuplicateData
        let delta = discovered && sessions.isFiltered ? 0 : RemoteDevice.unfilteredRSSIDelta
        if var device = devices[report.address] {
            device.expiry = device.temporary && temporaryTimeout > 0 ? now.advanced(bySeconds: temporaryTimeout) : nil
            if let expiry = device.expiry { expiries.schedule(report.address, at: expiry) }
            let changed = device.apply(report, rssiDelta: delta, duplicateData: duplicate)
            devices[report.address] = device
            let values = device.values(of: changed, adapterPath: path, experimental: experimental)
            guard !values.isEmpty else { return [] }
            advertisementReports &+= 1
            return [.deviceChanged(report.address, changed: values, invalidated: [])]
        }
        var device = RemoteDevice(address: report.address, addressType: report.addressType)
        device.expiry = temporaryTimeout > 0 ? now.advanced(bySeconds: temporaryTimeout) : nil
        if let expiry = device.expiry { expiries.schedule(report.address, at: expiry) }
        _ = device.apply(report, rssiDelta: delta, duplicateData: duplicate)
        devices[report.address] = device
        advertisementReports &+= 1
        return [.deviceAdded(report.address, device.properties(adapterPath: path, experimental: experimental))]
    }

    /// When ``expire(at:)`` next has something to look at, for the shell's timer: a temporary
    /// device's expiry (or a renewed device's earlier one, which reschedules it), a device whose
    /// timer ran out while it was connected and that is disconnected now, or a monitor's lost timer.
    public var nextExpiry: SimInstant? {
        let released = expiredWhileConnected.compactMap { address -> SimInstant? in
            guard let device = devices[address], !device.connected else { return nil }
            return device.expiry
        }
        return (released + [expiries.earliest, monitorLostTimers.earliest].compactMap { $0 }).min()
    }

    /// Calls DeviceLost for the monitored devices whose lost timer ran out by `now`, and removes the temporary
    /// devices whose timer ran out (not connected ones: those go once they are disconnected, unless heard
    /// again). Looks only at the devices that come due.
    public mutating func expire(at now: SimInstant) -> [AdapterEvent] {
        let lost = expireMonitorDevices(at: now)
        var due: [DeviceAddress] = []
        for address in expiries.popDue(at: now, deadline: { devices[$0]?.expiry }) {
            if devices[address]?.connected == true {
                expiredWhileConnected.insert(address)
            } else {
                due.append(address)
            }
        }
        for address in expiredWhileConnected {
            guard let device = devices[address], let expiry = device.expiry else {
                expiredWhileConnected.remove(address)
                continue
            }
            if device.connected { continue }
            expiredWhileConnected.remove(address)
            if expiry <= now {
                due.append(address)
            } else {
                expiries.schedule(address, at: expiry)
            }
        }
        return lost + due.sorted().flatMap { remove($0) }
    }

    private mutating func remove(_ address: DeviceAddress) -> [AdapterEvent] {
        guard devices.removeValue(forKey: address) != nil else { return [] }
        forgetMonitorDevices(of: address)
        foundDuringDiscovery.remove(address)
        expiries.cancel(address)
        expiredWhileConnected.remove(address)
        return [.deviceRemoved(address)]
    }

    private mutating func endDiscovery() -> [AdapterEvent] {
        var events = cleanUpDiscovery()
        var changed = [Property("Discovering", .bool(false))]
        discovering = false
        if discoverableByDiscovery {
            discoverableByDiscovery = false
            discoverable = false
            changed.insert(Property("Discoverable", .bool(false)), at: 0)
        }
        events.append(.adapterChanged(changed))
        return events
    }

    /// bluetoothd's `discovery_cleanup`: found devices lose RSSI and TxPower; temporary devices
    /// that are not connectable go.
    mutating func cleanUpDiscovery() -> [AdapterEvent] {
        var events: [AdapterEvent] = []
        for address in foundDuringDiscovery.sorted() {
            guard var device = devices[address] else { continue }
            var invalidated: [String] = []
            if device.rssi != nil { invalidated.append("RSSI") }
            if device.txPower != nil { invalidated.append("TxPower") }
            device.rssi = nil
            device.txPower = nil
            devices[address] = device
            if !invalidated.isEmpty { events.append(.deviceChanged(address, changed: [], invalidated: invalidated)) }
        }
        foundDuringDiscovery = []
        let leaving = devices.values.filter { $0.temporary && !$0.connectable && !$0.connected }
        for address in leaving.map(\.address).sorted() { events += remove(address) }
        return events
    }

    private mutating func discoverableForFilters() -> [AdapterEvent] {
        guard sessions.isActive, sessions.wantsDiscoverable, !discoverable else { return [] }
        discoverable = true
        discoverableByDiscovery = true
        return [.adapterChanged([Property("Discoverable", .bool(true))])]
    }
}
