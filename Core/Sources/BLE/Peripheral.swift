import GATT

/// A remote peripheral, in the image of `CBPeripheral`. A light handle: its
/// state lives in the ``CentralManager`` that made it, keyed by
/// ``identifier``, so two handles for the same identifier are the same peripheral.
public final class Peripheral: Sendable {
    /// The stable identifier (see ``PeripheralIdentifier``).
    public let identifier: PeripheralIdentifier
    private let central: CentralManager

    init(identifier: PeripheralIdentifier, central: CentralManager) {
        self.identifier = identifier
        self.central = central
    }

    private var devicePath: String? { central.state.withLock { $0.devicePath(for: identifier) } }

    private func connectedPath() throws(BLEError) -> String {
        guard let path = devicePath else { throw BLEError.notConnected }
        return path
    }

    /// The name (Device1.Name or a real Alias).
    public var name: String? {
        central.state.withLock { state in
            state.devicePath(for: identifier).flatMap { state.mirror.device(at: $0)?.advertisement.localName }
        }
    }

    /// The link state.
    public var state: PeripheralState {
        central.state.withLock { $0.peripheralStates[identifier] ?? .disconnected }
    }

    /// Service discovery progress, from Device1's Connected and ServicesResolved.
    public var serviceDiscoveryState: ServiceDiscoveryState {
        central.state.withLock { state in
            guard let path = state.devicePath(for: identifier), let device = state.mirror.device(at: path),
                device.connected
            else { return .idle }
            return device.servicesResolved ? .discovered : .discovering
        }
    }

    /// The services BlueZ resolved, empty until then.
    public var services: [RemoteService] {
        central.state.withLock { state in
            guard let path = state.devicePath(for: identifier) else { return [] }
            return state.mirror.remoteServices(ofDeviceAt: path)
        }
    }

    /// Waits until BlueZ has resolved the services (Device1.ServicesResolved;
    /// BlueZ always discovers the whole database) and returns those among
    /// `uuids` (all for nil).
    ///
    /// - Throws: ``BLEError/Code/notConnected``, or ``BLEError/Code/timeout``
    ///   after ``CentralManager/Options/connectTimeout``, its message naming
    ///   what was missing (the link, Device1.ServicesResolved, or the
    ///   snapshot confirming the services).
    public func discoverServices(_ uuids: [BluetoothUUID]? = nil) async throws(BLEError) -> [RemoteService] {
        try await waitForResolvedServices()
        return services.filter { uuids?.contains($0.uuid) ?? true }
    }

    /// The services `service` includes (GattService1.Includes).
    public func discoverIncludedServices(for service: RemoteService) async throws(BLEError) -> [RemoteService] {
        try await waitForResolvedServices()
        let included = central.state.withLock { state in
            state.mirror.includedServicePaths(ofServiceAt: service.objectPath)
        }
        return services.filter { included.contains($0.objectPath) }
    }

    /// The characteristics of `service` among `uuids` (all for nil).
    public func discoverCharacteristics(
        _ uuids: [BluetoothUUID]? = nil, for service: RemoteService
    )
        async throws(BLEError) -> [RemoteCharacteristic]
    {
        try await waitForResolvedServices()
        return central.state.withLock { state in
            state.mirror.characteristics(ofServiceAt: service.objectPath).compactMap {
                state.mirror.remoteCharacteristic(at: $0.path)
            }
        }.filter { uuids?.contains($0.uuid) ?? true }
    }

    /// The descriptors of `characteristic`.
    public func discoverDescriptors(
        for characteristic: RemoteCharacteristic
    ) async throws(BLEError) -> [RemoteDescriptor] {
        try await waitForResolvedServices()
        return central.state.withLock { state in
            state.mirror.remoteDescriptors(ofCharacteristicAt: characteristic.objectPath)
        }
    }

    /// Reads a fresh value from the device.
    ///
    /// - Throws: ``BLEError/Code/operationNotSupported`` when the
    ///   characteristic has no read property; the peer's ATT error as
    ///   ``BLEError/Code/notPermitted(_:)``; queue errors.
    public func readValue(for characteristic: RemoteCharacteristic) async throws(BLEError) -> [UInt8] {
        guard characteristic.properties.contains(.read) else {
            throw BLEError(.operationNotSupported, message: "characteristic has no read property")
        }
        let path = try connectedPath()
        let backend = central.backend
        let attribute = characteristic.objectPath
        return try await central.enqueue(devicePath: path, attribute: attribute) { () async throws(BLEError) in
            try await backend.readValue(attribute: attribute, offset: 0)
        }
    }

    /// Writes `value`. Without response, `value` must fit
    /// ``maximumWriteValueLength(for:)``; see ``writeValueInChunks(_:for:)``.
    public func writeValue(
        _ value: [UInt8], for characteristic: RemoteCharacteristic, type: WriteType
    )
        async throws(BLEError)
    {
        let required: CharacteristicProperties = type == .withResponse ? .write : .writeWithoutResponse
        guard characteristic.properties.contains(required) else {
            throw BLEError(.operationNotSupported, message: "characteristic lacks \(required)")
        }
        guard value.count <= maximumWriteValueLength(for: type, characteristic: characteristic) else {
            throw BLEError(.invalidLength, message: "\(value.count) bytes exceed the maximum write length")
        }
        let path = try connectedPath()
        let backend = central.backend
        let attribute = characteristic.objectPath
        try await central.enqueue(devicePath: path, attribute: attribute) { () async throws(BLEError) in
            try await backend.writeValue(attribute: attribute, value: value, type: type)
        }
    }

    /// The largest value one write of `type` can carry: 512 with response
    /// (BlueZ splits long writes), ATT_MTU - 3 without.
    public func maximumWriteValueLength(for type: WriteType, characteristic: RemoteCharacteristic? = nil) -> Int {
        switch type {
        case .withResponse: return ATTMTU.maximumAttributeValueLength
        case .withoutResponse:
            let mtu = characteristic?.mtu ?? .minimum
            return mtu.maximumWritePayload
        }
    }

    /// Whether a write without response can be sent now (the AcquireWrite
    /// socket is not full).
    public var canSendWriteWithoutResponse: Bool {
        guard let path = devicePath else { return false }
        return central.state.withLock { !$0.cannotSend.contains(path) }
    }

    /// An event each time writes without response can be sent again.
    public func readyToSendWriteWithoutResponse() -> AsyncStream<Void> {
        let path = devicePath
        // Subscribed now, not when the task starts: a drain right after this call is not lost.
        let drains = central.flowBroadcast.stream()
        // "Ready" is a state, not a count: one pending event is enough.
        return AsyncStream(bufferingPolicy: .bufferingNewest(1)) { continuation in
            let task = Task {
                for await ready in drains where ready == path { continuation.yield(()) }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Writes `payload` without response in chunks of at most
    /// ``maximumWriteValueLength(for:characteristic:)`` bytes, in order,
    /// waiting for readiness whenever the transmit queue is full.
    public func writeValueInChunks(_ payload: [UInt8], for characteristic: RemoteCharacteristic) async throws(BLEError)
    {
        let mtu = characteristic.mtu ?? .minimum
        for chunk in mtu.writeWithoutResponseChunks(of: payload) {
            let ready = readyToSendWriteWithoutResponse()  // subscribed before looking: no drain missed
            if !canSendWriteWithoutResponse {
                for await _ in ready { break }
            }
            try await writeValue(chunk, for: characteristic, type: .withoutResponse)
        }
    }

    /// Subscribes to (or unsubscribes from) notifications or indications.
    /// The subscription is the manager's own state: it is restored exactly
    /// once after every reconnect until turned off.
    ///
    /// Values are kept from the moment the subscription is wanted: those that
    /// arrive while no ``notifications(for:)`` stream of the characteristic is
    /// open wait for the next one (at most
    /// ``CentralManager/Options/notificationQueueCapacity``; past that the
    /// oldest is dropped, counted in ``CentralStatistics/heldNotifications``),
    /// so subscribing first and listening after loses nothing. Turning the
    /// subscription off drops what waits.
    public func setNotifyValue(_ enabled: Bool, for characteristic: RemoteCharacteristic) async throws(BLEError) {
        guard characteristic.properties.contains(.notify) || characteristic.properties.contains(.indicate) else {
            throw BLEError(.operationNotSupported, message: "characteristic cannot notify or indicate")
        }
        let reference = characteristic.reference
        let path = try connectedPath()
        let backend = central.backend
        let attribute = characteristic.objectPath
        if enabled {
            // Listen before looking, so a restore that settles meanwhile is not missed.
            let settled = central.subscriptionBroadcast.stream()
            let startNow = central.state.withLock { $0.subscriptions.subscribe(reference) }
            try await central.persist()
            guard startNow else {
                try await waitWhileStarting(reference, settled: settled)
                return
            }
            let generation = central.state.withLock { state -> UInt64? in
                if case .starting(let generation) = state.subscriptions.status(of: reference) { return generation }
                return nil
            }
            do throws(BLEError) {
                try await central.enqueue(devicePath: path, attribute: attribute) { () async throws(BLEError) in
                    try await backend.startNotify(characteristic: attribute)
                }
                if let generation {
                    central.state.withLock { $0.subscriptions.started(reference, generation: generation) }
                }
                central.notificationStateBroadcast.yield(.init(characteristic: reference, isNotifying: true))
            } catch {
                central.state.withLock { state in
                    _ = state.subscriptions.unsubscribe(reference)
                    state.notifications.dropHeld(for: reference)
                }
                try? await central.persist()
                central.notificationStateBroadcast.yield(
                    .init(characteristic: reference, isNotifying: false, error: error))
                throw error
            }
        } else {
            let wasStarted = central.state.withLock { state in
                state.notifications.dropHeld(for: reference)
                return state.subscriptions.unsubscribe(reference)
            }
            try await central.persist()
            guard wasStarted else {
                central.notificationStateBroadcast.yield(.init(characteristic: reference, isNotifying: false))
                return
            }
            do throws(BLEError) {
                try await central.enqueue(devicePath: path, attribute: attribute) { () async throws(BLEError) in
                    try await backend.stopNotify(characteristic: attribute)
                }
                central.notificationStateBroadcast.yield(.init(characteristic: reference, isNotifying: false))
            } catch {
                central.notificationStateBroadcast.yield(
                    .init(characteristic: reference, isNotifying: false, error: error))
                throw error
            }
        }
    }

    /// Each subscription of this peripheral turned on or off (Core Bluetooth's
    /// didUpdateNotificationStateFor): by ``setNotifyValue(_:for:)`` and by the
    /// manager's restore after every reconnect. Subscribed at the call.
    public func notificationStateUpdates() -> AsyncStream<NotificationStateChange> {
        let id = identifier
        let changes = central.notificationStateBroadcast.stream()
        return AsyncStream(bufferingPolicy: .bufferingNewest(central.notificationStateBroadcast.capacity)) {
            continuation in
            let task = Task {
                for await change in changes where change.characteristic.peripheral == id { continuation.yield(change) }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Returns once a subscription the manager is restoring (after a
    /// reconnect) is no longer starting, so a caller's `setNotifyValue(true)`
    /// never returns before BlueZ is notifying; throws when that start failed.
    private func waitWhileStarting(
        _ reference: CharacteristicReference, settled: AsyncStream<CharacteristicReference>
    ) async throws(BLEError) {
        let isStarting = { [central] () -> Bool? in
            central.state.withLock { state -> Bool? in
                switch state.subscriptions.status(of: reference) {
                case .starting: return true
                case .active: return false
                case .inactive, nil: return nil
                }
            }
        }
        guard isStarting() == true else { return }
        for await settledReference in settled where settledReference == reference {
            switch isStarting() {
            case true: continue
            case false: return
            default: throw BLEError(.failed, message: "restoring the subscription failed")
            }
        }
    }

    /// Whether the manager holds a subscription to `characteristic`.
    public func isNotifying(_ characteristic: RemoteCharacteristic) -> Bool {
        central.state.withLock { $0.subscriptions.status(of: characteristic.reference) != nil }
    }

    /// Notified and indicated values of `characteristic`, across reconnects
    /// (a bounded stream: see ``NotificationStream``). It starts with the
    /// values the subscription received while no stream was open (see
    /// ``setNotifyValue(_:for:)``), so it may be called before or after
    /// subscribing.
    public func notifications(for characteristic: RemoteCharacteristic) -> NotificationStream {
        central.notificationStream(for: characteristic.reference)
    }

    /// Reads a descriptor's value from the device.
    public func readValue(for descriptor: RemoteDescriptor) async throws(BLEError) -> [UInt8] {
        let path = try connectedPath()
        let backend = central.backend
        let attribute = descriptor.objectPath
        return try await central.enqueue(devicePath: path, attribute: attribute) { () async throws(BLEError) in
            try await backend.readValue(attribute: attribute, offset: 0)
        }
    }

    /// Writes a descriptor's value (not the CCCD: use ``setNotifyValue(_:for:)``).
    public func writeValue(_ value: [UInt8], for descriptor: RemoteDescriptor) async throws(BLEError) {
        guard descriptor.uuid != .clientCharacteristicConfiguration else {
            throw BLEError(.notPermitted(.writeNotPermitted), message: "use setNotifyValue for the CCCD")
        }
        let path = try connectedPath()
        let backend = central.backend
        let attribute = descriptor.objectPath
        try await central.enqueue(devicePath: path, attribute: attribute) { () async throws(BLEError) in
            try await backend.writeValue(attribute: attribute, value: value, type: .withResponse)
        }
    }

    /// The RSSI BlueZ last reported (Device1.RSSI). BlueZ exposes no RSSI read
    /// on a connected LE link, so this is the latest advertising RSSI.
    ///
    /// - Throws: ``BLEError/Code/operationNotSupported`` when BlueZ has none.
    public func readRSSI() async throws(BLEError) -> Int {
        let rssi = central.state.withLock { state in
            state.devicePath(for: identifier).flatMap { state.mirror.device(at: $0)?.rssi }
        }
        guard let rssi else { throw BLEError(.operationNotSupported, message: "no RSSI reported") }
        return rssi
    }

    private func waitForResolvedServices() async throws(BLEError) {
        let id = identifier
        let deadline = central.clock.now + central.options.connectTimeout
        let changes = central.treeBroadcast.stream(initial: ())
        let clock = central.clock
        let central = self.central
        let resolved: Bool? = await withTaskGroup(of: Bool?.self) { group in
            group.addTask {
                for await _ in changes {
                    let status = central.state.withLock { state -> Bool? in
                        guard let path = state.devicePath(for: id), let device = state.mirror.device(at: path)
                        else { return false }
                        // Device1.Connect may have returned before its
                        // `Connected: true` reached the mirror: keep waiting.
                        guard device.connected else { return state.peripheralStates[id] == .connecting ? nil : false }
                        // Resolved, and the tree confirmed by a snapshot on this
                        // link (CentralManager.deviceLinkChanged explains why).
                        return device.servicesResolved && state.servicesSynced.contains(path) ? true : nil
                    }
                    if let status { return status }
                }
                return nil
            }
            group.addTask {
                try? await clock.sleep(until: deadline)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        switch resolved {
        case true: return
        case false: throw BLEError.notConnected
        default: throw BLEError(.timeout, message: servicesWaitCause())
        }
    }

    /// What the wait for resolved services was still missing at its deadline.
    private func servicesWaitCause() -> String {
        let seconds = central.options.connectTimeout.components.seconds
        return central.state.withLock { state in
            guard let path = state.devicePath(for: identifier), let device = state.mirror.device(at: path) else {
                return "the device went away while waiting for its services"
            }
            guard device.connected else {
                return "the link did not come up within \(seconds) s (Device1.Connected stayed false)"
            }
            guard device.servicesResolved else {
                return
                    "services never resolved: Device1.ServicesResolved stayed false for \(seconds) s on a connected link"
            }
            return "services resolved, but GetManagedObjects did not confirm them within \(seconds) s"
        }
    }
}
