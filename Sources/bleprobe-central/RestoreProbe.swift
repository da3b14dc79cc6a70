import BLE
import BlueZ
import DBus
import GATT
import Glibc

/// `bleprobe-central --restore-probe STATE_DIR --bus ADDRESS [--name HRM-C]`: a
/// central with state restoration (restore identifier `probe` under
/// STATE_DIR) on the bus at ADDRESS, for the SIGKILL restoration test.
///
/// Without saved state it scans for the device called NAME, connects, and
/// subscribes to its 2A37 characteristic, then prints `SUBSCRIBED <id>`.
/// With saved state it prints `WILL-RESTORE desired=<ids> subscriptions=<n>`
/// (what the manager restored, before anything is asked of it), waits for the
/// manager to reconnect by itself, finds 2A37 and prints
/// `RESUBSCRIBED <id> notifying=<bool>`. Either way it then prints
/// `VALUE <counter>` for each notification until killed.
enum RestoreProbe {
    static func line(_ text: String) {
        print(text)
        fflush(nil)
    }

    static func run(stateDirectory: String, bus: String, name: String) async throws {
        let connection = try await DBusConnection.connect(address: bus)
        let backend = try await BlueZCentralBackend(connection: connection)
        guard let store = RestorationStore(directory: stateDirectory, restoreIdentifier: "probe") else {
            throw StepFailure(description: "bad restore identifier")
        }
        let central = CentralManager(backend: backend, options: .init(restoration: store))
        let counterUUID = BluetoothUUID(uuid16: 0x2A37)
        let connections = central.connectionEvents()
        let peripheral: Peripheral
        switch central.restoredState {
        case .restored(let saved):
            line(
                "WILL-RESTORE desired=\(saved.desiredConnections.map(\.uuidString).sorted().joined(separator: ","))"
                    + " subscriptions=\(saved.subscriptions.count)")
            guard let id = saved.desiredConnections.first else { throw StepFailure(description: "nothing desired") }
            for await event in connections {
                if case .connected(id) = event { break }
            }
            guard let found = central.retrievePeripherals(withIdentifiers: [id]).first else {
                throw StepFailure(description: "restored peripheral not known")
            }
            peripheral = found
        case .empty, .corrupt:
            for await state in central.stateUpdates() where state == .poweredOn { break }
            var match: Discovery?
            for await discovery in try central.scanForPeripherals() where discovery.name == name {
                match = discovery
                break
            }
            central.stopScan()
            guard let match, let found = central.retrievePeripherals(withIdentifiers: [match.identifier]).first else {
                throw StepFailure(description: "\(name) not found")
            }
            try await central.connect(found)
            peripheral = found
        }
        var counter: RemoteCharacteristic?
        for service in try await peripheral.discoverServices() {
            counter = try await peripheral.discoverCharacteristics([counterUUID], for: service).first ?? counter
        }
        guard let counter else { throw StepFailure(description: "no 2A37") }
        var values = peripheral.notifications(for: counter).makeAsyncIterator()
        if case .restored = central.restoredState {
            line("RESUBSCRIBED \(peripheral.identifier.uuidString) notifying=\(peripheral.isNotifying(counter))")
        } else {
            try await peripheral.setNotifyValue(true, for: counter)
            line("SUBSCRIBED \(peripheral.identifier.uuidString)")
        }
        while let value = await values.next() {
            line("VALUE \(value.count >= 2 ? Int(value[0]) | Int(value[1]) << 8 : -1)")
        }
    }
}
