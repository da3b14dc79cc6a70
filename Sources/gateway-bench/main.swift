import BLE
import BLETesting
import BTHomeCrypto
import Foundation
import GATT
import Glibc
import SensorGateway
import SimCore

// gateway-bench: the sensor gateway under load, beside Bleak + bthome-ble doing the same job in the same run (a
// benchmark, not a test). One blesim on a private bus serves the scenario (default sim/scenarios/gateway-load.json:
// 1,000 BTHome sensors every 100 ms, one in ten encrypted); first bleagent with the SensorGateway plugin (backend
// bluez on that bus) listens for --seconds after --warmup, then Tests/Bleak/bthome_bench.py (Bleak's BlueZ backend,
// bthome-ble decoding each BTHome advertisement with the same bind keys) for as long on the same air. Each side's
// own counts and its process CPU time (utime + stime) over the window give reports handled and decoded per second
// and CPU per report. A third row is the gateway's own work per report without D-Bus: the same sensors' service
// data fed to its engine (decode, de-duplication, state) in this process. Build in release first:
//   swift build -c release --product blesim && swift build -c release --product bleagent \
//     && swift build -c release --product blectl && swift build -c release --product SensorGateway \
//     && swift build -c release --product gateway-bench
//   .build/release/gateway-bench [--scenario FILE] [--seconds 20] [--warmup 5] [--build .build/release]
//                                [--python .build/venv-bleak/bin/python]

struct Options {
    var scenario = BlesimProcess.repositoryRoot + "/sim/scenarios/gateway-load.json"
    var seconds = 20
    var warmup = 5
    var build = BlesimProcess.repositoryRoot + "/.build/release"
    var python = BlesimProcess.repositoryRoot + "/.build/venv-bleak/bin/python"

    init(_ arguments: [String]) throws {
        var rest = arguments[...]
        while let flag = rest.popFirst() {
            guard let value = rest.popFirst() else { throw PrivateBus.Failure.setup("\(flag) needs a value") }
            switch flag {
            case "--scenario": scenario = value
            case "--seconds": seconds = Int(value) ?? seconds
            case "--warmup": warmup = Int(value) ?? warmup
            case "--build": build = value
            case "--python": python = value
            default: throw PrivateBus.Failure.setup("unknown option \(flag)")
            }
        }
    }
}

/// One side's figures over the measured window.
struct Figures {
    var reports: Double
    var decoded: Double
    var cpuSeconds: Double
    var seconds: Double

    var row: [String] {
        [
            "\(Int(reports / seconds))", "\(Int(decoded / seconds))",
            reports > 0 ? String(format1(cpuSeconds / reports * 1e6)) : "-", "\(Int(cpuSeconds / seconds * 100))%",
        ]
    }
}

func format1(_ value: Double) -> String {
    let tenths = Int((value * 10).rounded())
    return "\(tenths / 10).\(tenths % 10)"
}

/// utime + stime of `pid`, seconds (/proc/PID/stat fields 14 and 15, in clock ticks).
func cpuSeconds(_ pid: pid_t) -> Double {
    guard let file = fopen("/proc/\(pid)/stat", "r") else { return 0 }
    defer { fclose(file) }
    var buffer = [CChar](repeating: 0, count: 4096)
    guard fgets(&buffer, Int32(buffer.count), file) != nil else { return 0 }
    let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    // Fields after the command name, which is in parentheses and may hold spaces.
    guard let close = text.lastIndex(of: ")") else { return 0 }
    let fields = text[text.index(after: close)...].split(separator: " ")
    guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
}

/// The bind keys of the scenario's encrypted sensors, one `ADDRESS HEX` line each.
func keyFile(for scenario: Scenario) -> String {
    scenario.devices.compactMap { device -> String? in
        guard case .bthome(_, let key?, _, _)? = device.sensor?.format else { return nil }
        let hex = key.bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        return "\(device.address) \(hex)"
    }.joined(separator: "\n") + "\n"
}

func write(_ path: String, _ text: String, mode: mode_t) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode)
    _ = Array(text.utf8).withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
    close(fd)
}

func statsNumbers(_ blectl: String, _ socket: String) async throws -> (reports: Double, decoded: Double) {
    let (output, status) = try await tool([blectl, "--socket", socket, "--json", "gateway", "stats"])
    guard status == 0 else { throw PrivateBus.Failure.setup("gateway.stats failed: \(output)") }
    func number(_ key: String) -> Double {
        guard let range = output.range(of: "\"\(key)\":") else { return 0 }
        return Double(output[range.upperBound...].prefix { $0.isNumber }) ?? 0
    }
    return (number("reportsIn"), number("decoded"))
}

/// `path` made absolute (the agent's config resolves relative paths against its own directory).
func absolute(_ path: String) -> String {
    guard let resolved = realpath(path, nil) else { return path }
    defer { free(resolved) }
    return String(cString: resolved)
}

var options: Options
do {
    options = try Options(Array(CommandLine.arguments.dropFirst()))
} catch {
    print("gateway-bench: \(error)")
    exit(64)
}
options.build = absolute(options.build)
options.scenario = absolute(options.scenario)
let scenarioText = try String(contentsOfFile: options.scenario, encoding: .utf8)
let scenario = try Scenario.parse(scenarioText)
let offered = scenario.devices.reduce(0.0) { $0 + 1000 / $1.intervalMilliseconds }
setenv("BLESIM", options.build + "/blesim", 1)
var rows: [(String, Figures)] = []

do {
    try await TestBed.with(blesim: .file(options.scenario)) { bed in
        guard let sim = bed.blesim else { throw PrivateBus.Failure.setup("blesim did not start") }
        let directory = bed.directory + "/agent"
        mkdir(directory, 0o700)
        mkdir(directory + "/state", 0o700)
        mkdir(directory + "/state/plugins", 0o700)
        mkdir(directory + "/state/plugins/SensorGateway", 0o700)
        let keys = directory + "/state/plugins/SensorGateway/bthome-keys"
        write(keys, keyFile(for: scenario), mode: 0o600)
        let socket = directory + "/control.sock"
        write(
            directory + "/roles.json",
            """
            { "version": 1, "role": "central", "backend": "bluez", "adapter": "hci0",
              "control": { "socket": "\(socket)" }, "restore": { "stateDirectory": "\(directory)/state" },
              "pluginDirectory": "\(options.build)",
              "roles": { "central": { "plugin": "SensorGateway",
                "config": { "keyFile": "bthome-keys", "maxDevices": 4096, "eventIntervalSeconds": 10 } } } }
            """, mode: 0o600)

        // 1. bleagent with the gateway (its environment points at the bed's bus).
        let agent = try await bed.spawn(options.build + "/bleagent", ["--config", directory + "/roles.json"])
        let blectl = options.build + "/blectl"
        // Ready once the gateway answers on the control socket; the retries sleep in a task, holding no thread.
        var started = false
        for _ in 0..<300 where !started {
            started = (try? await statsNumbers(blectl, socket)) != nil
            if !started { try await Task.sleep(for: .milliseconds(100)) }
        }
        guard started else {
            _ = await agent.terminate()
            throw PrivateBus.Failure.setup("the gateway did not answer: \(agent.errorText)")
        }
        try await Task.sleep(for: .seconds(options.warmup))
        let before = try await statsNumbers(blectl, socket)
        let cpuBefore = cpuSeconds(agent.pid)
        let blesimBefore = cpuSeconds(sim.pid)
        try await Task.sleep(for: .seconds(options.seconds))
        let after = try await statsNumbers(blectl, socket)
        let cpuAfter = cpuSeconds(agent.pid)
        let blesimAfter = cpuSeconds(sim.pid)
        rows.append(
            (
                "bleagent + SensorGateway",
                Figures(
                    reports: after.reports - before.reports, decoded: after.decoded - before.decoded,
                    cpuSeconds: cpuAfter - cpuBefore, seconds: Double(options.seconds))
            ))
        print(
            "blesim CPU while the gateway listened: \(Int((blesimAfter - blesimBefore) / Double(options.seconds) * 100))%"
        )
        _ = await agent.terminate()

        // 2. Bleak + bthome-ble on the same air.
        let (output, status) = try await tool([
            "env", "DBUS_SYSTEM_BUS_ADDRESS=\(bed.bus.address)", "PYTHONDONTWRITEBYTECODE=1", options.python,
            BlesimProcess.repositoryRoot + "/Tests/Bleak/bthome_bench.py", "hci0", "\(options.seconds)",
            "\(options.warmup)",
            keys,
        ])
        guard status == 0, let line = output.split(separator: "\n").last(where: { $0.hasPrefix("bench ") }) else {
            throw PrivateBus.Failure.setup("bthome_bench.py failed:\n\(output)")
        }
        let values = line.split(separator: " ").dropFirst().compactMap { Double($0) }
        guard values.count == 4 else { throw PrivateBus.Failure.setup("bthome_bench.py printed \(line)") }
        rows.append(
            (
                "Bleak 3.1.0 + bthome-ble 3.25.0",
                Figures(reports: values[0], decoded: values[1], cpuSeconds: values[2], seconds: values[3])
            ))
    }
} catch {
    print("gateway-bench: \(error)")
    exit(1)
}

/// This process's CPU time, seconds.
func processCPUSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

// 3. The engine alone: every sensor advertising ten times per measurement, as in the scenario.
do {
    var keys: [SensorGateway.DeviceAddress: BTHomeBindKey] = [:]
    var reports: [GatewayReport] = []
    let sensors = scenario.devices.filter { $0.sensor != nil }
    for round in 0..<100 {
        for device in sensors {
            guard let sensor = device.sensor, let address = SensorGateway.DeviceAddress(device.address.description)
            else { continue }
            if case .bthome(_, let key?, _, _) = sensor.format { keys[address] = key }
            let data = sensor.serviceData(
                address: device.address, measurement: Int64(round / 10),
                intervalMilliseconds: device.intervalMilliseconds)
            reports.append(
                GatewayReport(
                    address: address, rssi: -60,
                    advertisement: AdvertisementData(
                        localName: device.advertisement.name, serviceData: [sensor.uuid: data])))
        }
    }
    var config = GatewayConfig()
    config.maxDevices = 4096
    var engine = GatewayEngine(config: config, keys: keys)
    let start = processCPUSeconds()
    var step = Duration.zero
    for (index, report) in reports.enumerated() {
        if index % sensors.count == 0 { step += .milliseconds(100) }
        _ = engine.ingest(report, at: step)
    }
    let cpu = processCPUSeconds() - start
    rows.append(
        (
            "GatewayEngine alone (in process)",
            Figures(
                reports: Double(reports.count), decoded: Double(engine.stats.decoded), cpuSeconds: cpu,
                seconds: max(cpu, 1e-9))
        ))
}

print(
    "gateway-bench: \(scenario.devices.count) devices offering \(Int(offered)) advertisements/s "
        + "(\(options.scenario)); \(options.seconds) s per side after \(options.warmup) s of warm-up")
let header = ["listener", "reports handled/s", "decoded/s", "CPU µs/report", "CPU"]
let table = [header] + rows.map { [$0.0] + $0.1.row }
let widths = header.indices.map { column in table.map { $0[column].count }.max() ?? 0 }
for row in table {
    print(
        row.enumerated().map { $1.padding(toLength: widths[$0], withPad: " ", startingAt: 0) }.joined(separator: " | "))
}
if rows.count >= 2, rows[1].1.reports > 0, rows[0].1.reports > 0 {
    let ours = rows[0].1
    let theirs = rows[1].1
    print(
        "ratios (gateway / Bleak): reports handled \(format1(ours.reports / theirs.reports))x, "
            + "decoded \(format1(ours.decoded / max(1, theirs.decoded)))x, "
            + "CPU per report \(format1((ours.cpuSeconds / ours.reports) / (theirs.cpuSeconds / theirs.reports)))x")
}
