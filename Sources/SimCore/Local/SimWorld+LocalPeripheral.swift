import GATT

/// The adapters' peripheral role: GATT applications and advertisements registered by clients
/// (GattManager1, LEAdvertisingManager1) become a virtual device in the air whose address is
/// the adapter's, whose GATT database is the applications', and which advertises what the
/// advertisement says.
extension SimWorld {
    /// How many advertisements an adapter takes at once (SupportedInstances when none is active).
    public static let supportedAdvertisingInstances = 1

    /// The peripheral device of `adapter`, created (off the air) on first use.
    mutating func peripheral(_ adapter: Int, now: SimInstant) -> LocalPeripheral {
        if let existing = localPeripherals[adapter] { return existing }
        let spec = adapters[adapter].spec
        let position = Position(x: spec.position.x + 1, y: spec.position.y)
        let device = VirtualDevice(
            address: spec.address, addressType: spec.addressType, advertisement: Advertisement(),
            radio: RadioModel(path: .fixed(position)))
        devices.append(device)
        air.append(intervalMilliseconds: device.intervalMilliseconds, now: now)
        offAir.insert(devices.count - 1)
        let peripheral = LocalPeripheral(device: devices.count - 1)
        localPeripherals[adapter] = peripheral
        return peripheral
    }

    /// RegisterApplication: `AlreadyExists` when `owner` registered `path` on this adapter
    /// already; the services join the adapter's database (links to it drop, as a database
    /// change would make remotes rediscover).
    public mutating func registerApplication(
        adapter: Int, _ application: LocalApplication, now: SimInstant
    ) throws(BlueZError) -> [Batch] {
        guard adapters.indices.contains(adapter) else { throw BluetoothdError.doesNotExist }
        var local = peripheral(adapter, now: now)
        guard !local.applications.contains(where: { $0.owner == application.owner && $0.path == application.path })
        else { throw BlueZError(.alreadyExists, "Already Exists") }
        local.applications.append(application)
        return install(local, adapter: adapter)
    }

    /// UnregisterApplication: `DoesNotExist` when `owner` has no application at `path` here.
    public mutating func unregisterApplication(
        adapter: Int, owner: String, path: String
    ) throws(BlueZError) -> [Batch] {
        guard var local = localPeripherals[adapter],
            let index = local.applications.firstIndex(where: { $0.owner == owner && $0.path == path })
        else { throw BlueZError(.doesNotExist, "Does Not Exist") }
        local.applications.remove(at: index)
        return install(local, adapter: adapter)
    }

    private mutating func install(_ local: LocalPeripheral, adapter: Int) -> [Batch] {
        // Links drop against the old database (its applications are told their subscriptions end).
        let batches = dropLinks(to: local.device) + virtualLinkLost(adapter: adapter)
        var local = local
        let (server, attributes) = local.database()
        local.attributes = attributes
        localPeripherals[adapter] = local
        if local.applications.isEmpty {
            servers[local.device] = nil
            devices[local.device].gatt = nil
        } else {
            servers[local.device] = server
            devices[local.device].gatt = GATTDatabaseSpec(services: [])
        }
        return batches
    }

    private mutating func dropLinks(to device: Int) -> [Batch] {
        links(of: devices[device].address).filter { links[$0]?.device == device }.flatMap {
            linkLost(adapter: $0.adapter, address: $0.address)
        }
    }

    /// RegisterAdvertisement: `AlreadyExists` for the same object again, `Failed "Maximum
    /// advertisements reached"` past the supported instances, `Failed "Failed to parse
    /// advertisement."` when it does not fit a legacy PDU (bluetoothd logs "Advertising data too
    /// long" and fails the parse). The adapter goes on the air.
    public mutating func registerAdvertisement(
        adapter: Int, _ advertisement: LocalAdvertisement, now: SimInstant
    ) throws(BlueZError) -> [Batch] {
        guard adapters.indices.contains(adapter) else { throw BluetoothdError.doesNotExist }
        var local = peripheral(adapter, now: now)
        if let existing = local.advertisement {
            if existing.owner == advertisement.owner && existing.path == advertisement.path {
                throw BlueZError(.alreadyExists, "Already Exists")
            }
            throw BlueZError(.failed, "Maximum advertisements reached")
        }
        if !advertisement.extended && advertisement.advertisement.sizeProblem != nil {
            throw BlueZError(.failed, "Failed to parse advertisement.")
        }
        local.advertisement = advertisement
        local.advertisementExpiry = advertisement.timeout.map { now.advanced(bySeconds: $0) }
        localPeripherals[adapter] = local
        devices[local.device].advertisement = advertisement.advertisement
        devices[local.device].connectable = advertisement.connectable
        offAir.remove(local.device)
        return [activeInstancesChanged(adapter)]
    }

    /// UnregisterAdvertisement (or bluetoothd removing it): the adapter leaves the air. Returns
    /// the advertisement removed (to Release it) and the events.
    public mutating func removeAdvertisement(
        adapter: Int, owner: String? = nil, path: String? = nil
    ) throws(BlueZError) -> (LocalAdvertisement, [Batch]) {
        guard var local = localPeripherals[adapter], let existing = local.advertisement,
            owner == nil || existing.owner == owner, path == nil || existing.path == path
        else { throw BlueZError(.doesNotExist, "Does Not Exist") }
        local.advertisement = nil
        local.advertisementExpiry = nil
        localPeripherals[adapter] = local
        offAir.insert(local.device)
        return (existing, [activeInstancesChanged(adapter)])
    }

    private func activeInstancesChanged(_ adapter: Int) -> Batch {
        let active = localPeripherals[adapter]?.advertisement == nil ? 0 : 1
        return Batch(
            adapter: adapter,
            events: [
                .objectChanged(
                    path: adapters[adapter].path, interface: BlueZInterface.advertisingManager,
                    changed: [
                        Property("ActiveInstances", .byte(UInt8(active))),
                        Property("SupportedInstances", .byte(UInt8(Self.supportedAdvertisingInstances - active))),
                    ], invalidated: [])
            ])
    }

    /// Advertisements whose Timeout has passed by `now`, removed, with their Release.
    mutating func expireAdvertisements(at now: SimInstant) -> [Batch] {
        var batches: [Batch] = []
        for adapter in localPeripherals.keys.sorted() {
            guard let expiry = localPeripherals[adapter]?.advertisementExpiry, expiry <= now,
                let (advertisement, events) = try? removeAdvertisement(adapter: adapter)
            else { continue }
            batches += events
            batches.append(
                Batch(
                    adapter: adapter,
                    events: [.advertisementReleased(owner: advertisement.owner, path: advertisement.path)]))
        }
        return batches
    }

    /// When the next advertisement Timeout expires.
    var nextAdvertisementExpiry: SimInstant? { localPeripherals.values.compactMap(\.advertisementExpiry).min() }

    /// A bus name left: its applications and advertisements vanish from the air (no Release:
    /// there is nobody to call).
    public mutating func peripheralOwnerLeft(_ owner: String) -> [Batch] {
        var batches: [Batch] = []
        for adapter in localPeripherals.keys.sorted() {
            guard var local = localPeripherals[adapter] else { continue }
            if local.advertisement?.owner == owner, let (_, events) = try? removeAdvertisement(adapter: adapter) {
                batches += events
                local = localPeripherals[adapter] ?? local
            }
            if local.applications.contains(where: { $0.owner == owner }) {
                local.applications.removeAll { $0.owner == owner }
                batches += install(local, adapter: adapter)
            }
        }
        return batches
    }

    /// Power off: the adapter's advertisement is removed (to Release) and links to it drop.
    public mutating func peripheralPoweredOff(_ adapter: Int) -> (LocalAdvertisement?, [Batch]) {
        guard let local = localPeripherals[adapter] else { return (nil, []) }
        var batches = dropLinks(to: local.device) + virtualLinkLost(adapter: adapter)
        var released: LocalAdvertisement?
        if let (advertisement, events) = try? removeAdvertisement(adapter: adapter) {
            released = advertisement
            batches += events
        }
        return (released, batches)
    }

    /// The application attribute behind a remote's operation, when the peer is a local
    /// application (then the shell calls the application instead of `finish` answering).
    public func localAttribute(of operation: GATTOperation) -> LocalAttribute? {
        let key = LinkKey(adapter: operation.adapter, address: operation.address)
        guard let device = links[key]?.device else { return nil }
        return localPeripherals.values.first { $0.device == device }?.attributes[operation.handle]
    }

    /// The application characteristic behind a remote characteristic object, with how many
    /// links (centrals) have it subscribed.
    public func localCharacteristic(remotePath path: String) -> (LocalAttribute, subscribers: Int)? {
        guard let located = try? locate(attribute: path), case .characteristic(let handle) = located.target,
            let local = localPeripherals.values.first(where: { $0.device == located.link.device }),
            let attribute = local.attributes[handle]
        else { return nil }
        let subscribers = links.values.filter { $0.device == local.device && $0.connected && $0.isSubscribed(handle) }
            .count
        return (attribute, subscribers)
    }

    /// How many indications a Value change of the application characteristic `path` of `owner`
    /// sends (one per subscribed central, the virtual one included), each confirmed by the
    /// central: bluetoothd calls the application's `Confirm` that many times. Zero for a
    /// characteristic that notifies.
    public func localConfirmations(owner: String, path: String) -> Int {
        indicationBearers(owner: owner, path: path).count
    }

    /// The bearers an indication of `path` of `owner` goes on (a subscribed central's link, or
    /// the virtual central on an adapter), each named for its ``IndicationQueue``: one per
    /// bearer, whatever the characteristic, as ATT allows one outstanding indication per bearer.
    func indicationBearers(owner: String, path: String) -> [String] {
        var bearers: [String] = []
        for (adapter, local) in localPeripherals.sorted(by: { $0.key < $1.key }) {
            guard
                let (handle, attribute) = local.attributes.first(where: {
                    $0.value.owner == owner && $0.value.path == path && $0.value.isCharacteristic
                }), attribute.indicates
            else { continue }
            for (key, link) in links where link.device == local.device && link.connected && link.isSubscribed(handle) {
                bearers.append("link \(key.adapter) \(key.address)")
            }
            if virtualCentral.connected.contains(adapter), virtualCentral.subscribed[adapter]?.contains(handle) == true
            {
                bearers.append("virtual \(adapter)")
            }
        }
        return bearers
    }

    /// A Value change of the indicating application characteristic `path` of `owner` at `now`:
    /// the seconds after which each of its indications is confirmed (one per subscribed
    /// central). Without a link model all at once (0); under one, each bearer carries one
    /// indication at a time, confirmed one connection event after it goes (``IndicationQueue``).
    public mutating func scheduleLocalConfirmations(owner: String, path: String, at now: SimInstant) -> [Double] {
        let bearers = indicationBearers(owner: owner, path: path)
        guard let model = linkModel else { return bearers.map { _ in 0 } }
        return bearers.map { bearer in
            var queue = indicationQueues[bearer] ?? IndicationQueue()
            let confirmed = queue.confirmation(at: now, roundTrip: model.indicationRoundTrip)
            indicationQueues[bearer] = queue
            return confirmed.seconds - now.seconds
        }
    }

    /// Where an operation of adapter `adapter` on device `address` lands when the device is a
    /// local application: the central's Device1 path on the peripheral adapter (the `device`
    /// option bluetoothd passes) and the link's MTU. Nil for scenario devices.
    public func centralView(adapter: Int, address: DeviceAddress) -> (central: String, mtu: UInt16)? {
        guard let link = links[LinkKey(adapter: adapter, address: address)],
            let peripheral = peripheralAdapter(ofDevice: link.device)
        else { return nil }
        return (adapters[peripheral].devicePath(adapters[adapter].spec.address), link.mtu)
    }

    /// The application characteristic behind the remote characteristic object `path`, with the
    /// central's Device1 path and the MTU (`centralView`).
    public func localTarget(remotePath path: String) -> (LocalAttribute, central: String, mtu: UInt16)? {
        guard let (attribute, _) = localCharacteristic(remotePath: path), let located = try? locate(attribute: path),
            let view = centralView(adapter: located.key.adapter, address: located.key.address)
        else { return nil }
        return (attribute, view.central, view.mtu)
    }

    /// The application changed a characteristic's Value: a notification to every subscribed
    /// link of the adapter's peripheral.
    public mutating func localValueChanged(owner: String, path: String, value: [UInt8]) -> [Batch] {
        var batches: [Batch] = []
        for local in localPeripherals.values {
            guard
                let handle = local.attributes.first(where: {
                    $0.value.owner == owner && $0.value.path == path && $0.value.isCharacteristic
                })?.key, let server = servers[local.device]
            else { continue }
            for key in links(of: devices[local.device].address) where links[key]?.device == local.device {
                let events = notify(key, server, handle, value)
                if !events.isEmpty { batches.append(Batch(adapter: key.adapter, events: events)) }
            }
        }
        return batches
    }
}
