extension CentralManager {
    /// A call for BlueZ, sent in the order the manager decided it.
    enum BackendCommand: Sendable {
        /// A discovery call on `adapter`.
        case discovery(adapter: String, DiscoverySession.Action)
        /// Register the advertisement monitor of scan `scan` on `adapter`.
        case registerMonitor(adapter: String, scan: DiscoverySession.Token, AdvertisementMonitor)
        /// Withdraw the monitor of scan `scan`.
        case unregisterMonitor(scan: DiscoverySession.Token)
    }

    /// bluetoothd called the monitor of scan `scan`: Activate makes the scan passive, Release
    /// makes it fall back to discovery, DeviceFound / DeviceLost add or drop a device it reports
    /// (a newly found device already in the mirror is reported at once: its Device1 signal may
    /// have come before the call).
    func monitorCalled(_ scan: DiscoverySession.Token, _ event: MonitorEvent, state: inout State) {
        guard let scanner = state.scanners[scan] else { return }
        switch event {
        case .activated:
            if scanner.mode.value == .passivePending { scanner.mode.set(.passive) }
        case .released:
            let reason =
                scanner.mode.value == .passivePending
                ? "bluetoothd released the advertisement monitor before activating it"
                : "bluetoothd released the advertisement monitor"
            fallBack(scan, reason: reason, state: &state)
            send(.unregisterMonitor(scan: scan))
        case .deviceFound(let path):
            guard scanner.found != nil, state.scanners[scan]?.found?.insert(path).inserted == true else { return }
            state.statistics.monitorDevicesFound += 1
            reportDiscovery(path, state: &state, only: scan)
        case .deviceLost(let path):
            guard state.scanners[scan]?.found?.remove(path) != nil else { return }
            state.statistics.monitorDevicesLost += 1
        }
    }

    /// The backend could not register the monitor of scan `scan`: it falls back to discovery.
    func monitorFailed(_ scan: DiscoverySession.Token, reason: String) {
        state.withLock { state in fallBack(scan, reason: reason, state: &state) }
    }

    private func fallBack(_ scan: DiscoverySession.Token, reason: String, state: inout State) {
        guard let scanner = state.scanners[scan], scanner.found != nil else { return }
        state.scanners[scan]?.found = nil
        state.statistics.monitorFallbacks += 1
        scanner.mode.set(.fallback(reason: reason))
        perform(state.discovery.fallBack(scan), adapter: state.machine.adapterID)
    }
}
