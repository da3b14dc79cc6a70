import BLETesting
import DBus
import Foundation
import Glibc
import IO
import SimCore

// blesim-bench: how fast blesim delivers to a D-Bus client (a benchmark, not a test). Build both in release:
//   swift build -c release --product blesim && swift build -c release --product blesim-bench
//   .build/release/blesim-bench [--devices 1000] [--notifiers 20] [--every-ms 1] [--seconds 10] [--blesim PATH]
//                               [--link interval=MS,phy=1M|2M|coded,packets=N,length=N]
// With --link, blesim runs the link model for the notification rows, and each row says the measured rate as a
// fraction of the physical limit (SimCore's LinkModel for a 2-byte value, MTU 247, times the notifiers).

struct Options {
    var devices = 1000
    var notifiers = 20
    var everyMs = 1
    var seconds = 10
    var blesim = ".build/release/blesim"
    var link: String?

    init(_ arguments: [String]) throws {
        var rest = arguments[...]
        while let flag = rest.popFirst() {
            guard let value = rest.popFirst() else { throw PrivateBus.Failure.setup("\(flag) needs a value") }
            switch flag {
            case "--devices": devices = Int(value) ?? devices
            case "--notifiers": notifiers = Int(value) ?? notifiers
            case "--every-ms": everyMs = Int(value) ?? everyMs
            case "--seconds": seconds = Int(value) ?? seconds
            case "--blesim": blesim = value
            case "--link": link = value
            default: throw PrivateBus.Failure.setup("unknown option \(flag)")
            }
        }
    }
}

let options = try Options(Array(CommandLine.arguments.dropFirst()))
let linkModel = try options.link.map { spec in try SimOptions.parse(["--link", spec]).link ?? LinkModel() }
let linkArguments = options.link.map { ["--link", $0] } ?? []
/// "N/s", with the share of the link model's limit when there is one.
func rate(_ count: Int) -> String {
    let perSecond = count / options.seconds
    guard let linkModel else { return "\(perSecond)/s" }
    let limit = linkModel.maxPerSecond(valueLength: 2, mtu: 247) * Double(options.notifiers)
    let share = (Double(count) / Double(options.seconds) / limit * 100).rounded()
    return "\(perSecond)/s = \(Int(share))% of the link limit \(Int(limit.rounded()))/s"
}
setenv("BLESIM", options.blesim, 1)
var rows: [(String, String, String)] = []

// 1. Advertisement reports: a DuplicateData filter makes every advertisement a PropertiesChanged.
try await PrivateBus.with { bus in
    let sim = try await Sim.start(bus: bus, scenario: Scenarios.advertisers(options.devices))
    defer { sim.stop() }
    let connection = try await bus.connect()
    let stream = try await connection.signals(MatchRule(sender: "org.bluez"), buffering: .newest(1_000_000))
    let duplicates = DBusValue.dictionary(
        key: .string, value: .variant, [(key: .string("DuplicateData"), value: .variant(.boolean(true)))])
    try await adapter(connection, "SetDiscoveryFilter", [duplicates])
    try await adapter(connection, "StartDiscovery")
    let received = try await count(stream, seconds: options.seconds) { $0.member == "PropertiesChanged" }
    rows.append(
        (
            "advertisement reports (PropertiesChanged)",
            "\(options.devices) devices x 50/s = \(options.devices * 50)/s offered",
            "\(received / options.seconds)/s, \(stream.droppedCount) dropped by the client"
        ))
    await sim.finish()
}

// 2 and 3. Notifications: PropertiesChanged Value after StartNotify, then packets on AcquireNotify sockets.
try await PrivateBus.with { bus in
    let sim = try await Sim.start(
        bus: bus, scenario: Scenarios.notifiers(options.notifiers, everyMs: options.everyMs), arguments: linkArguments)
    defer { sim.stop() }
    let connection = try await bus.connect()
    let setup = try await connection.signals(MatchRule(sender: "org.bluez"), buffering: .newest(1_000_000))
    var events = setup.makeAsyncIterator()
    try await adapter(connection, "StartDiscovery")
    var found = Set<String>()
    while found.count < options.notifiers, let message = await events.next() {
        if message.member == "InterfacesAdded", case .objectPath(let path)? = try message.arguments().first {
            if path.rawValue.hasPrefix("/org/bluez/hci0/dev_D0"), !path.rawValue.contains("/service") {
                found.insert(path.rawValue)
            }
        }
    }
    try await adapter(connection, "StopDiscovery")
    let devices = (0..<options.notifiers).map(Scenarios.notifierPath)
    for device in devices {
        _ = try await connection.call(
            destination: "org.bluez", path: ObjectPath(device), interface: "org.bluez.Device1", member: "Connect")
    }
    var resolved = Set<String>()
    while resolved.count < devices.count, let message = await events.next() {
        guard message.member == "PropertiesChanged", let path = message.path?.rawValue,
            let changed = try message.arguments().dropFirst().first,
            case .dictionary(_, _, let entries) = changed
        else { continue }
        if entries.contains(where: { $0.key == .string("ServicesResolved") && $0.value == .variant(.boolean(true)) }) {
            resolved.insert(path)
        }
    }
    setup.finish()
    let characteristics = devices.map { $0 + "/service000a/char000b" }
    let offered =
        "\(options.notifiers) characteristics x \(1000 / options.everyMs)/s = "
        + "\(options.notifiers * 1000 / options.everyMs)/s offered"

    let values = try await connection.signals(
        MatchRule(sender: "org.bluez", interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"),
        buffering: .newest(1_000_000))
    for path in characteristics { try await characteristic(connection, path, "StartNotify") }
    let notified = try await count(values, seconds: options.seconds) { $0.path?.rawValue.hasSuffix("char000b") == true }
    for path in characteristics { try await characteristic(connection, path, "StopNotify") }
    rows.append(
        (
            "notifications (StartNotify, PropertiesChanged Value)", offered,
            "\(rate(notified)), \(values.droppedCount) dropped by the client"
        ))

    var sockets: [Int32] = []
    for path in characteristics {
        let reply = try await connection.call(
            destination: "org.bluez", path: ObjectPath(path), interface: "org.bluez.GattCharacteristic1",
            member: "AcquireNotify", arguments: [.dictionary(key: .string, value: .variant, [])]
        ).arguments()
        guard case .unixFD(let fd)? = reply.first, let raw = fd.take() else {
            throw PrivateBus.Failure.setup("AcquireNotify replied \(reply)")
        }
        sockets.append(raw)
    }
    let seconds = options.seconds
    let packets = await BlockingPool.shared.run { [sockets] in readPackets(sockets, seconds: seconds) }
    for socket in sockets { close(socket) }
    rows.append(("notifications (AcquireNotify sockets)", offered, rate(packets)))
    await sim.finish()
}

print(
    "blesim-bench: \(options.blesim), \(options.seconds) s per row"
        + (options.link.map { ", link model \($0)" } ?? ", no link model"))
let widths = (rows.map(\.0.count).max() ?? 0, rows.map(\.1.count).max() ?? 0)
for (what, offered, received) in [("measure", "offered", "received")] + rows {
    print(
        what.padding(toLength: widths.0, withPad: " ", startingAt: 0) + " | "
            + offered.padding(toLength: widths.1, withPad: " ", startingAt: 0) + " | " + received)
}
