// bleprobe-peripheral: a PeripheralManager on one adapter over
// BlueZPeripheralBackend, for the VM payloads (Tests/VM/peripheral-*.sh).
//
// Serves Battery (0x180F: Battery Level 0x2A19, read + notify) and a custom
// service (...abc0) with an echo characteristic (...abc1, read + write: a
// write is logged and read back) and a failing one (...abc2, read: answered
// with ATT application error 0x80). Advertises "--name" and 0x180F. When a
// central writes "notify" to the echo characteristic it sends three Battery
// Level notifications (99, 98, 97): bluetoothd's own battery plugin on the
// central's side subscribes at connection, before a test client does, so a
// notification sent on subscription could arrive before the client listens. Every step is printed with a PROBE prefix. It stops (unregistering the
// advertisement and the application) when stdin closes.
import BLE
import BlueZ
import DBus
import GATT
import IO

#if canImport(Glibc)
    import Glibc
#endif

/// One line on stdout, written at once (not through stdio: `fflush(NULL)`
/// would wait for the lock of stdin, held by the thread blocked reading it).
func log(_ text: String) {
    let line = Array("PROBE \(text)\n".utf8)
    line.withUnsafeBytes { _ = write(1, $0.baseAddress, $0.count) }
}

var adapterName = "hci0"
var name = "bleprobe"
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--adapter": adapterName = arguments.next() ?? "hci0"
    case "--name": name = arguments.next() ?? name
    default:
        log("unknown argument \(argument)")
        exit(2)
    }
}

let customService = BluetoothUUID("12345678-1234-5678-1234-56789abcabc0")!
let echoUUID = BluetoothUUID("12345678-1234-5678-1234-56789abcabc1")!
let failingUUID = BluetoothUUID("12345678-1234-5678-1234-56789abcabc2")!
let batteryLevel = LocalCharacteristic(service: .battery, uuid: .batteryLevel)

let backend: BlueZPeripheralBackend
do {
    backend = try await BlueZPeripheralBackend.start()
} catch {
    log("FAIL starting the backend: \(error)")
    exit(1)
}
// Power the adapter on (btvirt controllers start powered off).
_ = try? await backend.connection.call(
    destination: "org.bluez", path: ObjectPath("/org/bluez/" + adapterName),
    interface: "org.freedesktop.DBus.Properties",
    member: "Set", arguments: [.string("org.bluez.Adapter1"), .string("Powered"), .variant(.boolean(true))])

let manager = PeripheralManager(backend: backend, options: .init(adapter: adapterName))
for await state in manager.stateUpdates() {
    log("state \(state)")
    if state == .poweredOn { break }
}

let started = ContinuousClock.now
do {
    try await manager.add(
        GATTService(
            uuid: .battery, characteristics: [GATTCharacteristic(uuid: .batteryLevel, properties: [.read, .notify])]))
    try await manager.add(
        GATTService(
            uuid: customService,
            characteristics: [
                GATTCharacteristic(uuid: echoUUID, properties: [.read, .write]),
                GATTCharacteristic(uuid: failingUUID, properties: [.read]),
            ]))
    log("services registered in \(ContinuousClock.now - started)")
    try await manager.startAdvertising(AdvertisingData(serviceUUIDs: [.battery], localName: name))
    log("advertising \(name) in \(ContinuousClock.now - started)")
} catch {
    log("FAIL \(error)")
    await backend.shutdown()
    exit(1)
}

/// Three Battery Level notifications (99, 98, 97), waiting for room in the
/// transmit queue when it is full.
func notifyBatteryLevels() async {
    for level: UInt8 in [99, 98, 97] {
        while !manager.updateValue([level], for: batteryLevel) {
            for await _ in manager.readyToUpdate() { break }
        }
        log("notified \(level)")
    }
}

let requests = Task {
    var echo: [UInt8] = Array("hello".utf8)
    for await request in manager.requests() {
        let what = request.characteristic.uuid
        if request.isRead {
            log("read \(what.shortString) offset \(request.offset) from \(request.central)")
            switch what {
            case .batteryLevel: request.respond(with: [100])
            case echoUUID: request.respond(with: Array(echo.dropFirst(request.offset)))
            default: request.respond(withError: ATTError(0x80))
            }
        } else {
            let text = String(decoding: request.value, as: UTF8.self)
            log("write \(what.shortString) value \"\(text)\" offset \(request.offset) from \(request.central)")
            echo = request.value
            request.respond()
            if text == "notify" { await notifyBatteryLevels() }
        }
    }
}

let notifier = Task {
    for await event in manager.subscriptionEvents() {
        switch event {
        case .subscribed(_, let characteristic, _):
            log("subscribed \(characteristic)")
        case .unsubscribed(_, let characteristic):
            log("unsubscribed \(characteristic)")
        }
    }
}

// Run until stdin closes (the payload closes it to stop us): it is read on the
// core's shared event loop, never on the cooperative pool (which may have a
// single thread in the VM, and the D-Bus handlers need it).
do {
    let input = try OutputCollector(try FileDescriptor.standardInput.duplicate())
    var seen = 0
    while true {
        let known = seen
        let more = await input.wait(timeout: .seconds(86_400)) { $0.filter { $0 == 0x0A }.count > known }
        let lines = input.text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        for line in lines.dropFirst(seen) { log("stdin: \(line)") }
        seen = lines.count
        if !more && input.isFinished { break }
    }
} catch {
    log("cannot read stdin (\(error)); stopping")
}
log("stopping")
try? await manager.stopAdvertising()
await backend.shutdown()
log("stopped: advertisement and application unregistered")
requests.cancel()
notifier.cancel()
