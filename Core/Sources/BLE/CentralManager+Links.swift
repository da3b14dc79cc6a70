extension CentralManager {
    /// Follows a device's link (Device1 Connected and ServicesResolved): the
    /// peripheral's state and connection events, failing its operations when
    /// the link drops, reconnecting a wanted peripheral after a plain link
    /// loss, and restoring subscriptions once the services are confirmed.
    /// Only devices of the manager's adapter.
    func deviceLinkChanged(_ path: String) {
        var needsSync = false
        var failed: [OperationQueue.Action] = []
        var event: ConnectionEvent?
        var resubscribe: [Resubscription] = []
        var lostWanted: PeripheralIdentifier?
        state.withLock { state in
            guard let device = state.scopedDevice(at: path), let id = state.mirror.identifier(ofDeviceAt: path) else {
                return
            }
            let previous = state.peripheralStates[id] ?? .disconnected
            if device.connected {
                // While disconnecting, ServicesResolved going false still shows the link up: not a new connection.
                if previous != .connected && previous != .disconnecting {
                    state.peripheralStates[id] = .connected
                    event = .connected(id)
                }
                // bluetoothd 5.66 may signal ServicesResolved (with UUIDs, Name)
                // before the InterfacesAdded of the services of a first
                // connection: dbus-monitor in the VM showed it (the agent then
                // listed no service, Bleak none or 1 of 6), while the conformance
                // fixture recorded the opposite order: it depends on timing.
                // Once per
                // link, a GetManagedObjects reply sent after that signal (it
                // holds every exported object) settles the tree before the
                // services are used or the subscriptions restored.
                if device.servicesResolved && !state.servicesSynced.contains(path)
                    && state.servicesSyncRequested[path] == nil
                {
                    state.servicesSyncRequested[path] = (state.mirror.snapshotsApplied, state.currentDeltaSerial)
                    needsSync = true
                }
                if device.servicesResolved && state.servicesSynced.contains(path) {
                    resubscribe = linkUp(id, state: &state)
                }
            }
            if !device.connected {
                state.servicesSynced.remove(path)
                state.servicesSyncRequested[path] = nil
                // ServicesResolved without Connected: bluetoothd 5.66 can bring a link up without
                // signalling Connected (its ATT channel connected before the kernel's event; see
                // ``linkConfirmed(_:)``). Its reply to GetManagedObjects shows the link.
                if device.servicesResolved { needsSync = true }
            }
            // Only a link the manager saw up can drop: while connecting, the attempt decides.
            if !device.connected && (previous == .connected || previous == .disconnecting) {
                state.peripheralStates[id] = .disconnected
                if var queue = state.queues[path] {
                    failed = queue.linkDropped()
                    state.queues[path] = queue
                }
                state.subscriptions.linkDown(id)
                let requested = previous == .disconnecting || !state.desiredConnections.contains(id)
                event = .disconnected(id, requested ? nil : .notConnected)
                // A plain link loss of a wanted peripheral (the adapter still on): connect it again.
                if !requested && state.machine.state == .poweredOn { lostWanted = id }
            }
        }
        run(failed)
        if let lostWanted { scheduleReconnect(lostWanted, after: options.reconnectPolicy.firstDelay) }
        if let event { connectionBroadcast.yield(event) }
        if needsSync { requestSnapshot() }
        start(resubscribe)
    }

    /// A subscription to start again on a new link generation.
    struct Resubscription {
        var reference: CharacteristicReference
        var characteristicPath: String
        var generation: UInt64
    }

    /// The services of the device at `path` are confirmed (a snapshot after its
    /// ServicesResolved, or the signals when no snapshot came): marks them so
    /// and, its link being up, starts the link's generation in the same
    /// critical section. A `setNotifyValue` that finds the services usable so
    /// finds the link up too, and starts its subscription itself; one that came
    /// before is started by the returned list (see ``start(_:)``).
    func servicesConfirmed(_ path: String, state: inout State) -> [Resubscription] {
        state.servicesSynced.insert(path)
        guard let device = state.scopedDevice(at: path), device.connected, device.servicesResolved,
            let id = state.mirror.identifier(ofDeviceAt: path)
        else { return [] }
        return linkUp(id, state: &state)
    }

    /// A new link generation of `id` (nothing when it has one): the wanted
    /// subscriptions to start on it; one whose characteristic is gone fails.
    private func linkUp(_ id: PeripheralIdentifier, state: inout State) -> [Resubscription] {
        let (generation, references) = state.subscriptions.linkUp(id)
        var resubscribe: [Resubscription] = []
        for reference in references {
            if let characteristicPath = state.mirror.characteristicPath(for: reference) {
                resubscribe.append(
                    .init(reference: reference, characteristicPath: characteristicPath, generation: generation))
            } else {
                _ = state.subscriptions.startFailed(reference, generation: generation)
            }
        }
        return resubscribe
    }

    /// Starts each subscription of a new link generation (StartNotify, or AcquireNotify where used).
    func start(_ resubscribe: [Resubscription]) {
        for item in resubscribe {
            let (reference, characteristicPath, generation) = (item.reference, item.characteristicPath, item.generation)
            let backend = self.backend
            Task { [weak self] in
                var change = NotificationStateChange(characteristic: reference, isNotifying: true)
                do throws(BLEError) {
                    try await backend.startNotify(characteristic: characteristicPath)
                    self?.state.withLock { $0.subscriptions.started(reference, generation: generation) }
                } catch {
                    _ = self?.state.withLock { $0.subscriptions.startFailed(reference, generation: generation) }
                    change = NotificationStateChange(characteristic: reference, isNotifying: false, error: error)
                }
                self?.subscriptionBroadcast.yield(reference)
                self?.notificationStateBroadcast.yield(change)
            }
        }
    }
}
