import IO

extension CentralManager {
    /// The state to persist now.
    func restorationSnapshot() -> RestorationState {
        state.withLock { state in
            for id in state.desiredConnections where state.known[id] == nil {
                guard let path = state.devicePath(for: id), let device = state.mirror.device(at: path),
                    let adapter = state.mirror.adapterAddress(of: device.adapterPath)
                else { continue }
                state.known[id] = RestorationState.KnownPeripheral(
                    identifier: id, adapter: adapter, address: device.address, addressType: device.addressType,
                    name: device.advertisement.localName)
            }
            return RestorationState(
                knownPeripherals: state.known.keys.sorted().compactMap { state.known[$0] },
                desiredConnections: state.desiredConnections.sorted(),
                subscriptions: state.subscriptions.references)
        }
    }

    /// Writes the state to the restoration store, if there is one, before
    /// the operation that changed it reports success: what was confirmed
    /// survives SIGKILL. The write (two fsyncs) runs on the blocking pool;
    /// saves asked for while one runs fold into the next, which takes the
    /// state as it is then, so the last change wins.
    func persist() async throws(BLEError) {
        guard let store = options.restoration else { return }
        let writer = persistence.withLock { writer in
            if let writer { return writer }
            let made = CoalescingWriter<Void> { [weak self] () throws(SystemError) in
                guard let self else { return }
                try store.save(self.restorationSnapshot())
            }
            writer = made
            return made
        }
        do {
            try await writer.save(())
        } catch {
            throw BLEError(.failed, message: "saving state: \(error)")
        }
    }
}

extension CentralManager {
    /// The restoration store the manager persists to (``Options/restoration``), nil without one.
    public var restorationStore: RestorationStore? { options.restoration }

    /// The subscriptions the manager wants now (restored ones included), sorted.
    public var wantedSubscriptions: [CharacteristicReference] { state.withLock { $0.subscriptions.references } }

    /// The peripherals the manager keeps connected now (restored ones included), sorted.
    public var wantedConnections: [PeripheralIdentifier] { state.withLock { $0.desiredConnections.sorted() } }

    /// Notified and indicated values of the characteristic `reference` names,
    /// across reconnects: ``Peripheral/notifications(for:)`` for a
    /// subscription known only by its reference (one restored after a
    /// restart, before its peripheral is connected again).
    public func notifications(for reference: CharacteristicReference) -> NotificationStream {
        notificationStream(for: reference)
    }
}
