/// How ``CentralManager`` connects a wanted peripheral again (one it was
/// asked to connect and not asked to disconnect): after a plain link loss,
/// after the adapter powers on again, and when the device's object comes
/// back. Attempts continue, with the delay doubling from ``firstDelay`` up to
/// ``maximumDelay``, for as long as the peripheral is wanted, the manager is
/// poweredOn and the device is known and not connected (a Connect that
/// succeeded counts once the link shows: see ``CentralManager/connect(_:)``).
public struct ReconnectPolicy: Sendable, Hashable {
    /// The wait after a link loss before the first attempt (BlueZ has just
    /// torn the link down; reconnecting after a power cycle or a reappearing
    /// device does not wait).
    public var firstDelay: Duration
    /// The longest wait between two attempts.
    public var maximumDelay: Duration

    /// By default 250 ms, doubling up to 30 s.
    public init(firstDelay: Duration = .milliseconds(250), maximumDelay: Duration = .seconds(30)) {
        self.firstDelay = firstDelay
        self.maximumDelay = maximumDelay
    }

    /// The wait after an attempt that followed a wait of `delay`.
    func next(after delay: Duration) -> Duration {
        let doubled = delay == .zero ? firstDelay : delay * 2
        return min(max(doubled, firstDelay), maximumDelay)
    }
}

extension CentralManager {
    /// Starts the reconnect loop for `id` (first attempt after `delay`, or at
    /// once for nil). An immediate request replaces a loop that is waiting;
    /// a delayed one leaves a running loop alone.
    func scheduleReconnect(_ id: PeripheralIdentifier, after delay: Duration?) {
        state.withLock { state in
            if let running = state.reconnects[id] {
                guard delay == nil else { return }
                running.task.cancel()
            }
            state.nextReconnectToken += 1
            let token = state.nextReconnectToken
            let task = Task { [weak self] in
                await Self.reconnectLoop(id, firstDelay: delay ?? .zero) { [weak self] in self }
                self?.state.withLock { state in
                    if state.reconnects[id]?.token == token { state.reconnects[id] = nil }
                }
            }
            state.reconnects[id] = Reconnect(token: token, task: task)
        }
    }

    /// Holds the manager only during an attempt, never while it waits: a
    /// manager dropped by its owner ends the loop at the next wake-up.
    private static func reconnectLoop(
        _ id: PeripheralIdentifier, firstDelay: Duration, manager weakManager: @Sendable () -> CentralManager?
    ) async {
        var delay = firstDelay
        while true {
            if delay > .zero {
                guard let clock = weakManager()?.clock else { return }
                do { try await clock.sleep(until: clock.now + delay) } catch { return }
            }
            if Task.isCancelled { return }
            guard let manager = weakManager() else { return }
            let path = manager.state.withLock { state -> String? in
                guard state.machine.state == .poweredOn, state.desiredConnections.contains(id),
                    let path = state.devicePath(for: id), let device = state.mirror.device(at: path),
                    !device.connected
                else { return nil }
                state.peripheralStates[id] = .connecting
                return path
            }
            guard let path else { return }
            do throws(BLEError) {
                try await manager.backend.connect(device: path)
                // Connect answered; the next turn ends the loop once the mirror shows the link.
                if manager.linkConfirmed(path) { return }
            } catch {
                let connected = manager.state.withLock { state -> Bool in
                    let connected = state.mirror.device(at: path)?.connected ?? false
                    if !connected && state.peripheralStates[id] == .connecting {
                        state.peripheralStates[id] = .disconnected
                    }
                    return connected
                }
                if connected { return }
                manager.connectionBroadcast.yield(
                    .failedToConnect(
                        id, BLEError(.connectionFailed, bluezError: error.bluezError, message: error.message)))
            }
            delay = manager.options.reconnectPolicy.next(after: delay)
        }
    }
}
