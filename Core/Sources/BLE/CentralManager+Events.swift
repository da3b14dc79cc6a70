import GATT

extension CentralManager {
    /// What handling an event asks for once the state lock is released.
    struct Effects {
        var stateChange: ManagerState?
        var failed: [OperationQueue.Action] = []
        var toReconnect: [PeripheralIdentifier] = []
        var synced: [String] = []
        var resubscribe: [Resubscription] = []
        /// Device paths, in order: their link may have changed; `appeared` also reconnects a wanted one.
        var links: [(path: String, appeared: Bool)] = []
        var requestSnapshot = false
        var treeChanged = false
        var flowReady: String?
        var pauses: [(characteristic: String, paused: Bool)] = []
        var endedScans: [ScanQueue] = []
    }

    /// Applies one backend event to the state and acts on what changed.
    /// Called synchronously by the backend (see ``CentralEventReceiver``).
    func handle(_ event: CentralBackendEvent) {
        let now = clock.now
        var effects = Effects()
        state.withLock { state in
            state.statistics.events += 1
            let before = state.machine.state
            var changes: [ObjectTreeChange] = []
            var heard: String?
            switch event {
            case .bluetoothdPresent(let present):
                effects.stateChange = state.machine.apply(.bluetoothdPresent(present))
                changes = state.mirror.reset()
                state.servicesSynced = []
                state.servicesSyncRequested = [:]
                state.refreshes.dropWaiting()
                state.notifications.references = [:]
                effects.requestSnapshot = present
            case .accessDenied:
                effects.stateChange = state.machine.apply(.accessDenied)
            case .snapshot(let snapshot, let adapters, let serial):
                state.mirror.setAdapters(adapters)
                changes = state.mirror.applySnapshot(snapshot, serial: serial, now: now)
                for (path, asked) in state.servicesSyncRequested where asked.applied < state.mirror.snapshotsApplied {
                    if let after = asked.afterSerial, let serial, serial <= after { continue }
                    state.servicesSyncRequested[path] = nil
                    effects.resubscribe += servicesConfirmed(path, state: &state)
                    effects.synced.append(path)
                }
                effects.stateChange = state.machine.apply(.treeLoaded(adapters))
                effects.requestSnapshot = state.mirror.needsSnapshot
            case .delta(let delta, let serial):
                changes = state.mirror.receive(delta, serial: serial, now: now)
                state.currentDeltaSerial = serial
                heard = delta.advertisingDevice
            case .adapterUpdated(let adapter):
                state.mirror.updateAdapter(adapter)
                if state.mirror.isLoaded {
                    effects.stateChange = state.machine.apply(.adapterUpdated(adapter))
                }
            case .adapterRemoved(let id):
                state.mirror.removeAdapter(id: id)
                effects.stateChange = state.machine.apply(.adapterRemoved(id: id))
            case .notification(let path, let value):
                deliverNotification(value, characteristic: path, state: &state, effects: &effects)
            case .writeWithoutResponseFlow(let devicePath, let canSend):
                if canSend {
                    state.cannotSend.remove(devicePath)
                    effects.flowReady = devicePath
                } else {
                    state.cannotSend.insert(devicePath)
                }
            case .monitor(let scan, let monitorEvent):
                monitorCalled(scan, monitorEvent, state: &state)
            }
            changes += state.mirror.prune(now: now)
            leaveOrReachPoweredOn(from: before, state: &state, effects: &effects)
            react(to: changes, heard: heard, state: &state, effects: &effects)
            if let heard, !changes.contains(where: { $0.path == heard }) { reportDiscovery(heard, state: &state) }
            schedulePrune(state: &state)
            effects.treeChanged = !changes.isEmpty
            if effects.links.isEmpty { state.currentDeltaSerial = nil }
        }
        perform(effects)
    }

    /// Wakes the consumers that the last batch of events gave something to.
    func wakeConsumers() {
        let wakes = state.withLock { state in
            defer { state.wakes = [] }
            return state.wakes
        }
        for wake in wakes { wake() }
    }

    private func perform(_ effects: Effects) {
        for queue in effects.endedScans { queue.finish() }
        if let stateChange = effects.stateChange { stateBroadcast.yield(stateChange) }
        if effects.requestSnapshot { requestSnapshot() }
        run(effects.failed)
        for id in effects.toReconnect { scheduleReconnect(id, after: nil) }
        for (characteristic, paused) in effects.pauses {
            backend.setNotificationsPaused(paused, characteristic: characteristic)
        }
        if let ready = effects.flowReady { flowBroadcast.yield(ready) }
        for (path, appeared) in effects.links {
            deviceLinkChanged(path)
            if appeared { reconnectIfWanted(path) }
        }
        if !effects.links.isEmpty { state.withLock { $0.currentDeltaSerial = nil } }
        start(effects.resubscribe)
        for path in effects.synced { deviceLinkChanged(path) }
        if effects.treeChanged || !effects.synced.isEmpty { treeBroadcast.yield(()) }
    }

    /// Leaving poweredOn (the adapter went off or away, bluetoothd left)
    /// fails every pending operation; reaching it resumes scans and
    /// reconnects wanted peripherals.
    private func leaveOrReachPoweredOn(from before: ManagerState, state: inout State, effects: inout Effects) {
        if before == .poweredOn && state.machine.state != .poweredOn {
            effects.endedScans = endScans(leavingPoweredOnFor: state.machine.state, state: &state)
            for (path, var queue) in state.queues {
                effects.failed += queue.linkDropped()
                state.queues[path] = queue
            }
            for id in state.peripheralStates.keys {
                state.subscriptions.linkDown(id)
                state.peripheralStates[id] = .disconnected
            }
        }
        if before != .poweredOn && state.machine.state == .poweredOn {
            perform(state.discovery.resume(), adapter: state.machine.adapterID)
            effects.toReconnect = state.desiredConnections.sorted()
        }
    }

    private func react(to changes: [ObjectTreeChange], heard: String?, state: inout State, effects: inout Effects) {
        for change in changes {
            switch change.meaning {
            case .deviceAdded(let path):
                reportDiscovery(path, state: &state)
                effects.links.append((path, true))
            case .deviceChanged(let path, let keys):
                if path == heard || keys.advertised { reportDiscovery(path, state: &state) }
                if keys.link { effects.links.append((path, false)) }
            case .deviceRemoved(let path):
                state.forgetReports(of: path)
            case .characteristicValueChanged(let path):
                // Values through StartNotify; a read also changes the value, so only while notifying.
                guard let value = state.mirror.notifiedValue(ofCharacteristicAt: path) else { continue }
                deliverNotification(value, characteristic: path, state: &state, effects: &effects)
            case .attributesChanged:
                state.notifications.references = [:]
            case .needsRefresh(let path, let interface):
                if let start = state.refreshes.request(.init(path: path, interface: interface)) {
                    state.refreshTasks[start] = refreshTask(start)
                }
            case .other: break
            }
        }
    }

    /// Puts the discovery of the device at `path` in every matching scan's
    /// queue (one advertisement report), if the device is of our adapter.
    func reportDiscovery(_ path: String, state: inout State, only: DiscoverySession.Token? = nil) {
        guard let (device, id, version) = state.mirror.deviceReport(at: path) else { return }
        guard state.isInScope(device) else {
            state.statistics.otherAdapterReports += 1
            return
        }
        state.statistics.advertisementReports += 1
        var discovery: Discovery?
        // Each scan is updated in place: holding a copy of a scanner (or of the scanners' keys) while
        // its `reported` map changes would copy the whole map, every device's entry, per report.
        for token in only.map({ [$0] }) ?? state.scannerTokens {
            guard let queue = state.scanners[token]?.queue(admitting: device, version: version, at: path) else {
                continue
            }
            let found =
                discovery
                ?? Discovery(
                    identifier: id, address: device.address, name: device.advertisement.localName, rssi: device.rssi,
                    advertisement: device.advertisement)
            discovery = found
            if queue.push((key: id, element: found, count: 1)).needsWake { state.wakes.append { queue.wake() } }
        }
    }

    /// A wanted peripheral's object appeared again (after a bluetoothd
    /// restart it comes back only once discovery hears it): connect it.
    private func reconnectIfWanted(_ path: String) {
        let wanted = state.withLock { state -> PeripheralIdentifier? in
            guard state.machine.state == .poweredOn, let device = state.scopedDevice(at: path), !device.connected,
                let id = state.mirror.identifier(ofDeviceAt: path), state.desiredConnections.contains(id)
            else { return nil }
            return id
        }
        if let wanted { scheduleReconnect(wanted, after: nil) }
    }
}
