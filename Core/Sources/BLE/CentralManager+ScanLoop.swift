import GATT

extension CentralManager {
    /// What ``scanWhilePoweredOn(withServices:options:onChange:_:)`` reports about its scans.
    public enum ScanLoopEvent: Hashable, Sendable {
        /// A scan started (at first, and after each power cycle or bluetoothd restart).
        case scanning
        /// Starting a scan was refused.
        case refused(BLEError)
        /// The scan ended; the loop starts another once poweredOn when ``ScanEnd/resumesWhenPoweredOn``.
        case ended(ScanEnd)
    }

    /// Scans whenever the manager is poweredOn, until the calling task is
    /// cancelled or the scan is stopped: waits for poweredOn, starts a scan
    /// with `services` and `options`, hands each discovery to `handle` in
    /// order, and when the scan ends for a reason that passes (power off,
    /// bluetoothd gone, the adapter gone; ``ScanEnd/resumesWhenPoweredOn``)
    /// waits for poweredOn again. `onChange` hears each start, refusal and
    /// end; the last end it hears says why the loop returned (none when the
    /// task was cancelled while waiting for poweredOn). `onScan` gets each
    /// scan's stream as it starts (for its ``DiscoveryStream/counters``).
    public func scanWhilePoweredOn(
        withServices services: [BluetoothUUID]?, options: ScanOptions, onChange: (ScanLoopEvent) -> Void,
        onScan: (DiscoveryStream) -> Void = { _ in }, _ handle: (Discovery) async -> Void
    ) async {
        while !Task.isCancelled {
            for await state in stateUpdates() where state == .poweredOn { break }
            guard !Task.isCancelled else { return }
            do throws(BLEError) {
                let discoveries = try scanForPeripherals(withServices: services, options: options)
                onScan(discoveries)
                onChange(.scanning)
                for await found in discoveries { await handle(found) }
                let end = discoveries.end ?? .stopped
                onChange(.ended(end))
                guard end.resumesWhenPoweredOn, !Task.isCancelled else { return }
            } catch {
                onChange(.refused(error))
                if currentState == .unauthorized { return }
                for await state in stateUpdates() where state != .poweredOn { break }
            }
        }
    }
}
