import BLE
import BLETesting
import BlueZ
import DBus
import GATT
import Glibc
import IO
import Synchronization
import Testing

/// A CentralManager over BlueZCentralBackend against the built blesim on a private bus, serving
/// ``FaultRig/scenario``: the HRM-C device of Tests/BlesimTests/Fixtures/air.json with a counter
/// that notifies every 20 ms (so lost or doubled notifications show as gaps or repeats), a
/// readable 2A38 and a readable, writable note.
struct FaultRig {
    static let hrmAddress = "C0:00:00:00:00:0C"
    static let devicePath = "/org/bluez/hci0/dev_C0_00_00_00_00_0C"
    static let counter = BluetoothUUID(uuid16: 0x2A37)
    static let bodySensor = BluetoothUUID(uuid16: 0x2A38)
    static let note = BluetoothUUID("12345678-1234-5678-1234-56789abcdef1")!
    static let scenario = """
        { "seed": 11, "adapters": 1, "connectFailSeconds": 0.3, "mtu": 64,
          "devices": [ { "address": "C0:00:00:00:00:0C", "addressType": "random", "intervalMs": 50,
            "advertising": { "name": "HRM-C", "serviceUUIDs": ["180D"] }, "rssi": { "distance": 3 },
            "gatt": { "services": [
              { "uuid": "180D", "characteristics": [
                { "uuid": "2A37", "flags": ["notify"], "value": "0000",
                  "behaviour": { "counter": { "start": 0, "step": 1, "format": "uint16" }, "everyMs": 20 } },
                { "uuid": "2A38", "flags": ["read"], "value": { "int": 1, "format": "uint8" } } ] },
              { "uuid": "12345678-1234-5678-1234-56789abcdef0", "characteristics": [
                { "uuid": "12345678-1234-5678-1234-56789abcdef1", "flags": ["read", "write"],
                  "value": { "utf8": "note" } } ] } ] } } ] }
        """

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// The test bed: the private bus, blesim, the connections (closed at the end).
    let bed: TestBed
    var bus: PrivateBus { bed.bus }
    let scenarioPath: String
    /// The manager's connection.
    let client: DBusConnection
    /// The test's own connection: Control1 calls and watching signals.
    let monitor: DBusConnection

    /// Runs `body` on a ``TestBed`` with `scenario` (``FaultRig/scenario`` unless given) written into its
    /// directory, and two connections.
    static func with<T>(scenario: String = FaultRig.scenario, _ body: (FaultRig) async throws -> T) async throws -> T {
        try await TestBed.with { bed in
            let path = try await bed.write("faults.json", scenario)
            return try await body(
                FaultRig(
                    bed: bed, scenarioPath: path, client: try await bed.connect(), monitor: try await bed.connect()))
        }
    }

    func startSim() async throws -> BlesimProcess { try await bed.startBlesim(.file(scenarioPath)) }

    /// A manager over a new backend on ``client``, once poweredOn.
    func central(
        options: CentralManager.Options = .init(), backend: BlueZCentralBackend.Options = .init()
    ) async throws -> CentralManager {
        let central = CentralManager(
            backend: try await BlueZCentralBackend(connection: client, options: backend), options: options)
        guard await first(central.stateUpdates(), where: { $0 == .poweredOn }) != nil else {
            throw Failure("never poweredOn")
        }
        return central
    }

    /// org.blesim.Control1.`member`.
    func control(_ member: String, _ arguments: [DBusValue]) async throws {
        _ = try await monitor.call(
            destination: "org.bluez", path: try ObjectPath("/org/blesim"), interface: "org.blesim.Control1",
            member: member, arguments: arguments)
    }

    /// Finds HRM-C on `scan` and returns it.
    static func findHRM(
        _ central: CentralManager, on scan: some AsyncSequence<Discovery, Never> & Sendable
    ) async throws -> Peripheral {
        guard let found = await first(scan, where: { $0.name == "HRM-C" }),
            let peripheral = central.retrievePeripherals(withIdentifiers: [found.identifier]).first
        else { throw Failure("HRM-C not found") }
        return peripheral
    }

    /// Runs ``CentralManager/scanWhilePoweredOn(withServices:options:onChange:_:)`` (duplicates on) in a
    /// task until it is cancelled; its discoveries and loop events come out as streams.
    static func scanLoop(
        _ central: CentralManager
    ) -> (task: Task<Void, Never>, found: AsyncStream<Discovery>, events: AsyncStream<CentralManager.ScanLoopEvent>) {
        let (found, foundSink) = AsyncStream<Discovery>.makeStream(bufferingPolicy: .bufferingNewest(1024))
        let (events, eventSink) = AsyncStream<CentralManager.ScanLoopEvent>.makeStream()
        let task = Task {
            await central.scanWhilePoweredOn(
                withServices: nil, options: ScanOptions(allowDuplicates: true),
                onChange: { eventSink.yield($0) }
            ) { foundSink.yield($0) }
            foundSink.finish()
            eventSink.finish()
        }
        return (task, found, events)
    }

    /// Connects `peripheral` and returns its characteristics by UUID.
    static func connect(
        _ peripheral: Peripheral, with central: CentralManager
    ) async throws -> [BluetoothUUID: RemoteCharacteristic] {
        try await central.connect(peripheral)
        var characteristics: [BluetoothUUID: RemoteCharacteristic] = [:]
        for service in try await peripheral.discoverServices() {
            for characteristic in try await peripheral.discoverCharacteristics(for: service) {
                characteristics[characteristic.uuid] = characteristic
            }
        }
        return characteristics
    }

    /// Scans for HRM-C, stops the scan, connects it.
    static func connectedHRM(
        _ central: CentralManager
    ) async throws -> (Peripheral, [BluetoothUUID: RemoteCharacteristic]) {
        let peripheral = try await findHRM(central, on: try central.scanForPeripherals())
        central.stopScan()
        return (peripheral, try await connect(peripheral, with: central))
    }

    /// PropertiesChanged signals of org.bluez under the device, as (path, changed properties).
    func deviceChanges() async throws -> AsyncStream<(String, [String: DBusValue])> {
        let signals = try await monitor.signals(
            .propertiesChanged(sender: "org.bluez", pathNamespace: try ObjectPath(Self.devicePath)),
            buffering: .unbounded)
        return AsyncStream { continuation in
            let task = Task {
                for await signal in signals {
                    guard let arguments = try? signal.arguments(), arguments.count == 3,
                        let changed = try? arguments[1].decode([String: DBusValue].self)
                    else { continue }
                    continuation.yield((signal.path?.rawValue ?? "", changed))
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// The events of `stream` up to the first point where `done` holds for
    /// all seen so far (all of them if the stream ends or 20 s pass first).
    static func collect<Element: Sendable>(
        _ stream: some AsyncSequence<Element, Never> & Sendable, until done: @escaping @Sendable ([Element]) -> Bool
    ) async -> [Element] {
        let seen = Collected<Element>()
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await element in stream {
                    let all = seen.items.withLock { seen in
                        seen.append(element)
                        return seen
                    }
                    if done(all) { return }
                }
            }
            group.addTask { try? await Task.sleep(for: .seconds(20)) }
            await group.next()
            group.cancelAll()
        }
        return seen.items.withLock { $0 }
    }

    /// The counter's value as a number.
    static func count(_ value: [UInt8]) -> Int {
        value.count >= 2 ? Int(value[0]) | Int(value[1]) << 8 : -1
    }

    /// The next `n` values of `stream` as counts (fewer if it ends or 20 s pass).
    static func take(_ n: Int, from iterator: inout NotificationStream.AsyncIterator) async -> [Int] {
        var values: [Int] = []
        while values.count < n, let value = await iterator.next() { values.append(count(value)) }
        return values
    }
}

/// Whether each value is one more than the one before (mod 2^16): no notification lost or doubled.
func isGapless(_ values: [Int]) -> Bool {
    zip(values, values.dropFirst()).allSatisfy { ($0 + 1) & 0xFFFF == $1 }
}

/// The BLEError code `body` threw, nil when it succeeded.
func errorCode<T>(_ body: () async throws(BLEError) -> T) async -> BLEError.Code? {
    do {
        _ = try await body()
        return nil
    } catch {
        return error.code
    }
}

/// Elements shared with a collecting task.
final class Collected<Element: Sendable>: Sendable {
    /// What was collected so far.
    let items = Mutex<[Element]>([])
}
