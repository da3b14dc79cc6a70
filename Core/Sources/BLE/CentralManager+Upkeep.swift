extension CentralManager {
    /// Asks bluetoothd for its whole tree (GetManagedObjects). One call at a
    /// time: asked again while one is on its way, it runs once more after it.
    /// When a call fails, services waiting for a confirming snapshot are taken
    /// as the signals gave them.
    func requestSnapshot() {
        state.withLock { state in
            guard state.snapshotRequest.running == nil else {
                state.snapshotRequest.again = true
                return
            }
            startSnapshot(state: &state)
        }
    }

    private func startSnapshot(state: inout State) {
        if state.mirror.needsSnapshot { state.mirror.snapshotScheduled() } else { state.mirror.snapshotRequested() }
        let backend = self.backend
        state.snapshotRequest.running = Task { [weak self] in
            var failed = false
            do throws(BLEError) { try await backend.requestSnapshot() } catch { failed = true }
            self?.snapshotFinished(failed: failed)
        }
    }

    private func snapshotFinished(failed: Bool) {
        let (unconfirmed, resubscribe) = state.withLock { state -> ([String], [Resubscription]) in
            state.snapshotRequest.running = nil
            var unconfirmed: [String] = []
            var resubscribe: [Resubscription] = []
            if failed {
                state.mirror.snapshotFailed()
                unconfirmed = state.servicesSyncRequested.keys.sorted()
                state.servicesSyncRequested = [:]
                for path in unconfirmed { resubscribe += servicesConfirmed(path, state: &state) }
            }
            if state.snapshotRequest.again {
                state.snapshotRequest.again = false
                startSnapshot(state: &state)
            }
            return (unconfirmed, resubscribe)
        }
        start(resubscribe)
        for path in unconfirmed { deviceLinkChanged(path) }
        if !unconfirmed.isEmpty { treeBroadcast.yield(()) }
    }

    /// A Properties.GetAll of a pruned object (see ``RefreshQueue``); its end
    /// starts the next one waiting.
    func refreshTask(_ request: RefreshQueue.Request) -> Task<Void, Never> {
        let backend = self.backend
        return Task { [weak self] in
            try? await backend.refresh(path: request.path, interface: request.interface)
            self?.refreshFinished(request)
        }
    }

    private func refreshFinished(_ request: RefreshQueue.Request) {
        state.withLock { state in
            state.refreshTasks[request] = nil
            if let next = state.refreshes.finished(request) { state.refreshTasks[next] = refreshTask(next) }
        }
    }

    /// Keeps one timer for the mirror's next expiry, so stale devices go
    /// even when the bus is quiet. The next expiry only moves later while
    /// devices are heard, so the timer is replaced only when it would be late.
    func schedulePrune(state: inout State) {
        guard let due = state.mirror.nextPruneTime() else { return }
        if let timer = state.pruneTimer, timer.deadline <= due { return }
        state.pruneTimer?.task.cancel()
        let clock = self.clock
        let task = Task { [weak self] in
            do { try await clock.sleep(until: due) } catch { return }
            self?.pruneDue()
        }
        state.pruneTimer = (due, task)
    }

    private func pruneDue() {
        let now = clock.now
        let changed = state.withLock { state -> Bool in
            state.pruneTimer = nil
            let changes = state.mirror.prune(now: now)
            for change in changes {
                if case .deviceRemoved(let path) = change.meaning { state.forgetReports(of: path) }
            }
            schedulePrune(state: &state)
            return !changes.isEmpty
        }
        if changed { treeBroadcast.yield(()) }
    }

    /// What the manager handled and what its bounds cost so far.
    public var statistics: CentralStatistics {
        var statistics = state.withLock { state in
            var statistics = state.statistics
            statistics.mirror = CentralStatistics.Mirror(
                objects: state.mirror.objectCount, devices: state.mirror.deviceCount,
                prunableDevices: state.mirror.prunableDeviceCount, limits: state.mirror.limits,
                counters: state.mirror.counters)
            statistics.refreshes = state.refreshes.counters
            statistics.scanCount = state.scanners.count
            statistics.scans = state.scanners.values.reduce(state.statistics.scans) { $0 + $1.queue.counters }
            statistics.notifications = state.notifications.counters
            statistics.heldNotifications = state.notifications.heldCounters
            statistics.notificationStreams = state.notifications.streamCount
            statistics.notificationPauses = state.notifications.pauses
            return statistics
        }
        statistics.streamDrops = [
            "state": stateBroadcast.droppedCount, "connection": connectionBroadcast.droppedCount,
            "writeFlow": flowBroadcast.droppedCount,
            "subscription": subscriptionBroadcast.droppedCount,
            "notificationState": notificationStateBroadcast.droppedCount,
            "discoveryCommands": droppedDiscoveryCommands.load(ordering: .relaxed),
        ]
        return statistics
    }
}
