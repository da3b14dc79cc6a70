import GATT

extension CentralManager {
    /// What ``scanWhilePoweredOn(withServices:options:onChange:_:)`` reports about its scans.
    public enum ScanLoopEvent: Sendable {
        /// A scan started (at first, and after each power cycle or bluetoothd restart).
        case scanning
        /// Starting a scan was refused.
        case refused(BLEError)
    }

    /// Scans whenever the manager is poweredOn, until the calling task is cancelled: waits for poweredOn,
    /// starts a scan with `services` and `options`, hands each discovery to `handle` in order, and when the scan
    /// ends (power off, bluetoothd gone) waits for poweredOn again. `onChange` hears each start and each refusal.
    public func scanWhilePoweredOn(
        withServices services: [BluetoothUUID]?, options: ScanOptions, onChange: (ScanLoopEvent) -> Void,
        _ handle: (Discovery) async -> Void
    ) async {
        while !Task.isCancelled {
            for await state in stateUpdates() where state == .poweredOn { break }
            guard !Task.isCancelled else { return }
            do throws(BLEError) {
                let discoveries = try scanForPeripherals(withServices: services, options: options)
                onChange(.scanning)
                for await found in discoveries { await handle(found) }
            } catch {
                onChange(.refused(error))
            }
            for await state in stateUpdates() where state != .poweredOn { break }
        }
    }
}
