// bleprobe-central: drives CentralManager over BlueZCentralBackend against
// BlueZ's example-gatt-server and example-advertisement (Tests/VM/central-
// example-gatt-server.sh runs it in the VM beside the real bluetoothd 5.66).
//
//   bleprobe-central [--adapter hci1] [--notify start|acquire] [--timeout 60]
//   bleprobe-central --restart-scan [--adapter hci1]
//   bleprobe-central --monitor-rssi [--adapter hci1]   (Tests/VM/central-monitor-rssi.sh)
//   bleprobe-central --restore-probe STATE_DIR --bus ADDRESS [--name NAME]   (RestoreProbe.swift)
//
// --restart-scan: scan, print "RESTART-ME" once Adapter1.Discovering is true, then
// expect resetting (bluetoothd killed by the payload), poweredOn again,
// Discovering from the new daemon (resumed by the manager) and a discovery.
//
// Prints one line per step; exit 0 when every step passed, 1 on a failed
// step, 2 when the deadline passed.
import BLE
import BlueZ
import DBus
import GATT
import Glibc

let arguments = CommandLine.arguments
func option(_ name: String, _ fallback: String) -> String {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return fallback }
    return arguments[index + 1]
}
let adapterName = option("--adapter", "hci1")
let adapter = "/org/bluez/" + adapterName
let notifyMode = option("--notify", "acquire")
let deadline = Int(option("--timeout", "60")) ?? 60
let start = ContinuousClock.now

func log(_ text: String) {
    let elapsed = ContinuousClock.now - start
    let ms = elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000
    print("[\(ms) ms] \(text)")
    fflush(nil)
}

func hex(_ bytes: [UInt8]) -> String {
    bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
}

let testService = BluetoothUUID("12345678-1234-5678-1234-56789abcdef0")!
let testCharacteristic = BluetoothUUID("12345678-1234-5678-1234-56789abcdef1")!
let testDescriptor = BluetoothUUID("12345678-1234-5678-1234-56789abcdef2")!
let userDescription = BluetoothUUID(uuid16: 0x2901)

struct StepFailure: Error, CustomStringConvertible {
    let description: String
}

func expect(_ condition: Bool, _ what: String) throws {
    guard condition else { throw StepFailure(description: what) }
}

func run() async throws {
    let backend = try await BlueZCentralBackend.system(
        options: .init(acquireNotify: notifyMode == "acquire", acquireWrite: true))
    let central = CentralManager(backend: backend, options: .init(adapter: adapterName))
    for await state in central.stateUpdates() {
        log("state \(state)")
        if state == .poweredOff {
            _ = try await backend.connection.call(
                destination: "org.bluez", path: try ObjectPath(adapter), interface: "org.freedesktop.DBus.Properties",
                member: "Set", arguments: [.string("org.bluez.Adapter1"), .string("Powered"), .variant(.boolean(true))])
        }
        if state == .poweredOn { break }
    }

    var found: Discovery?
    for await discovery in try central.scanForPeripherals(withServices: [.heartRate]) {
        found = discovery
        break
    }
    guard let found else { throw StepFailure(description: "scan ended without a discovery") }
    let ad = found.advertisement
    log(
        "scan: found \(found.identifier) name=\(found.name ?? "-") rssi=\(found.rssi.map(String.init) ?? "-") "
            + "services=\(ad.serviceUUIDs.map(\.shortString)) manufacturer=\(ad.manufacturerData.map { "\($0.key):\(hex($0.value))" }) "
            + "serviceData=\(ad.serviceData.map { "\($0.key.shortString):\(hex($0.value))" }) tx=\(ad.txPower.map(String.init) ?? "-")"
    )
    try expect(ad.serviceUUIDs.contains(.heartRate), "advertised Heart Rate service")

    let events = central.connectionEvents()
    let peripheral = central.retrievePeripherals(withIdentifiers: [found.identifier])[0]
    try await central.connect(peripheral)
    log("connect: Device1.Connect returned, state \(peripheral.state)")
    let services = try await peripheral.discoverServices()
    log("discover: \(services.map(\.uuid.shortString))")

    guard let battery = services.first(where: { $0.uuid == .battery }),
        let level = try await peripheral.discoverCharacteristics([.batteryLevel], for: battery).first
    else { throw StepFailure(description: "no Battery Level") }
    let value = try await peripheral.readValue(for: level)
    log("read Battery Level: \(value) (mtu \(level.mtu.map { "\($0)" } ?? "-"))")
    try expect(value.count == 1, "one-byte battery level")

    guard let heartRate = services.first(where: { $0.uuid == .heartRate }) else {
        throw StepFailure(description: "no Heart Rate service")
    }
    let hrCharacteristics = try await peripheral.discoverCharacteristics(for: heartRate)
    guard let measurement = hrCharacteristics.first(where: { $0.uuid == .heartRateMeasurement }),
        let controlPoint = hrCharacteristics.first(where: { $0.uuid == .heartRateControlPoint })
    else { throw StepFailure(description: "no Heart Rate Measurement / Control Point") }
    let stream = peripheral.notifications(for: measurement)
    try await peripheral.setNotifyValue(true, for: measurement)
    let transport = backend.notifyTransport(of: measurement.objectPath)
    log("notify: subscribed, transport \(transport.map { "\($0)" } ?? "none")")
    try expect(
        transport == (notifyMode == "acquire" ? .acquiredSocket : .startNotify), "notify transport \(notifyMode)")
    var count = 0
    for await value in stream {
        count += 1
        log("notify: Heart Rate Measurement #\(count) \(hex(value))")
        if count == 3 { break }
    }
    try await peripheral.setNotifyValue(false, for: measurement)
    log("notify: unsubscribed")

    try await peripheral.writeValue([1], for: controlPoint, type: .withResponse)
    log("write with response: Heart Rate Control Point <- 01 ok (energy expended reset)")
    do {
        try await peripheral.writeValue([2], for: controlPoint, type: .withResponse)
        throw StepFailure(description: "control point accepted 02")
    } catch let error as BLEError {
        log("write with response: Heart Rate Control Point <- 02 refused: \(error)")
    }
    do {
        try await peripheral.writeValue([1], for: controlPoint, type: .withoutResponse)
        throw StepFailure(description: "write without response allowed on a write-only characteristic")
    } catch let error as BLEError {
        log("write without response (API): refused before BlueZ: \(error)")
    }
    do {
        try await backend.writeValue(attribute: controlPoint.objectPath, value: [1], type: .withoutResponse)
        log(
            "write without response (backend): accepted by bluetoothd, "
                + (backend.hasWriteSocket(for: controlPoint.objectPath)
                    ? "through an AcquireWrite socket" : "AcquireWrite refused, WriteValue type=command"))
    } catch {
        log("write without response (backend, AcquireWrite then WriteValue command): \(error)")
    }

    // On a first connection bluetoothd 5.66 may set ServicesResolved before
    // it has exported every service: look again now.
    let servicesNow = try await peripheral.discoverServices()
    if services.count != servicesNow.count {
        log("discover again: \(servicesNow.map(\.uuid.shortString)) (more than at ServicesResolved)")
    }
    guard let test = servicesNow.first(where: { $0.uuid == testService }),
        let writable = try await peripheral.discoverCharacteristics([testCharacteristic], for: test).first
    else { throw StepFailure(description: "no test service characteristic") }
    try await peripheral.writeValue([0x42, 0x43, 0x44], for: writable, type: .withResponse)
    let readBack = try await peripheral.readValue(for: writable)
    log("test characteristic: wrote 424344, read back \(hex(readBack))")
    try expect(readBack == [0x42, 0x43, 0x44], "test characteristic read back what was written")
    let descriptors = try await peripheral.discoverDescriptors(for: writable)
    log("descriptors: \(descriptors.map(\.uuid.shortString))")
    if let cud = descriptors.first(where: { $0.uuid == userDescription }) {
        let text = try await peripheral.readValue(for: cud)
        log("read descriptor 2901: \"\(String(decoding: text, as: UTF8.self))\"")
        try await peripheral.writeValue(Array("probe".utf8), for: cud)
        let after = try await peripheral.readValue(for: cud)
        log("write descriptor 2901 <- \"probe\", read back \"\(String(decoding: after, as: UTF8.self))\"")
    }
    if let custom = descriptors.first(where: { $0.uuid == testDescriptor }) {
        // example-gatt-server's ReadValue here builds dbus.Byte('T') from a
        // str, which python3-dbus rejects: bluetoothd answers Unlikely Error.
        do {
            let bytes = try await peripheral.readValue(for: custom)
            log("read descriptor \(testDescriptor.shortString): \(hex(bytes))")
        } catch {
            log("read descriptor \(testDescriptor.shortString): the example fails it: \(error)")
        }
    }

    try await central.cancelConnection(peripheral)
    for await event in events {
        if case .disconnected(let id, let error) = event, id == found.identifier {
            log("disconnect: disconnected (error: \(error.map { "\($0)" } ?? "none"))")
            break
        }
    }
    log("PASS (\(notifyMode))")
}

func runRestart() async throws {
    let backend = try await BlueZCentralBackend.system()
    let central = CentralManager(backend: backend, options: .init(adapter: adapterName))
    let states = central.stateUpdates()
    for await state in central.stateUpdates() where state == .poweredOn { break }
    log("state poweredOn")
    let discovering = try await backend.connection.signals(
        .propertiesChanged(sender: "org.bluez", pathNamespace: try ObjectPath(adapter)), buffering: .unbounded)
    var starts = discovering.compactMap { signal -> String? in
        guard let body = try? signal.arguments(), body.count == 3, body[1]["Discovering"]?.boolValue == true else {
            return nil
        }
        return signal.sender ?? "?"
    }.makeAsyncIterator()
    let scan = try central.scanForPeripherals(withServices: [.heartRate], options: ScanOptions(allowDuplicates: true))
    guard let first = await starts.next() else { throw StepFailure(description: "no Discovering") }
    log("Adapter1.Discovering true on \(adapter) from \(first)")
    log("RESTART-ME")
    var seen: [ManagerState] = []
    for await state in states {
        if seen.last != state { seen.append(state) }
        if seen.contains(.resetting) && state == .poweredOn { break }
    }
    log("states across the restart: \(seen.map(\.rawValue))")
    guard let second = await starts.next() else { throw StepFailure(description: "no Discovering after the restart") }
    log("Adapter1.Discovering true on \(adapter) from \(second): the manager resumed the scan by itself")
    try expect(second != first, "Discovering from the new bluetoothd")
    for await found in scan {
        log("scan: found \(found.identifier) name=\(found.name ?? "-") after the restart")
        break
    }
    log("PASS (restart)")
}

/// A passive scan with RSSI thresholds (Tests/VM/central-monitor-rssi.sh): found, lost once the payload
/// stops the advertiser ("SILENCE-ME"), found again once it advertises again ("ADVERTISE-AGAIN").
func runMonitorRSSI() async throws {
    let backend = try await BlueZCentralBackend.system()
    let central = CentralManager(backend: backend, options: .init(adapter: adapterName))
    for await state in central.stateUpdates() where state == .poweredOn { break }
    log("state poweredOn")
    // example-advertisement's manufacturer data: company 0xFFFF, 00 01 02 03
    let monitor = AdvertisementMonitor(
        patterns: [try .manufacturerData(0xFFFF, prefix: [0x00, 0x01])],
        rssiThresholds: .init(high: -60, highTimeout: 3, low: -90, lowTimeout: 3))
    let scan = try central.scanForPeripherals(options: ScanOptions(allowDuplicates: true, monitor: monitor))
    for await mode in scan.modeUpdates() where mode != .passivePending {
        log("scan mode \(mode)")
        try expect(mode == .passive, "the monitor is activated")
        break
    }
    func until(_ what: String, _ condition: (CentralStatistics) -> Bool) async throws {
        while !condition(central.statistics) { try await Task.sleep(for: .milliseconds(100)) }
        let statistics = central.statistics
        log("\(what): found \(statistics.monitorDevicesFound), lost \(statistics.monitorDevicesLost)")
    }
    var reports = scan.makeAsyncIterator()
    guard let found = await reports.next() else { throw StepFailure(description: "scan ended without a report") }
    let rssi = found.measuredRSSI.map(String.init) ?? "not measured"
    log("found \(found.identifier) name=\(found.name ?? "-") rssi=\(rssi)")
    try expect(central.statistics.monitorDevicesFound == 1, "reported once DeviceFound came")
    log("SILENCE-ME")
    try await until("DeviceLost") { $0.monitorDevicesLost == 1 }
    try expect(central.statistics.monitorDevicesFound == 1, "not found again while silent")
    log("ADVERTISE-AGAIN")
    try await until("DeviceFound again") { $0.monitorDevicesFound == 2 }
    guard let again = await reports.next() else { throw StepFailure(description: "scan ended") }
    log("reported again: \(again.identifier)")
    log("PASS (monitor-rssi)")
}

let watchdog = Task {
    try? await Task.sleep(for: .seconds(deadline))
    log("FAIL: deadline of \(deadline) s passed")
    exit(2)
}
do {
    if arguments.contains("--restore-probe") {
        try await RestoreProbe.run(
            stateDirectory: option("--restore-probe", "."), bus: option("--bus", ""), name: option("--name", "HRM-C"))
    } else if arguments.contains("--monitor-rssi") {
        try await runMonitorRSSI()
    } else if arguments.contains("--restart-scan") {
        try await runRestart()
    } else {
        try await run()
    }
    watchdog.cancel()
    exit(0)
} catch {
    log("FAIL: \(error)")
    exit(1)
}
