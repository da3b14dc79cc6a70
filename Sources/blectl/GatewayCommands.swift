import ControlProtocol
import Glibc
import JSON

/// `blectl gateway devices|device|stats|readings`: the sensor gateway plugin's
/// methods and `reading` events as tables (docs/profiles/sensor-gateway.md).
struct GatewayCommand: BlectlCommand {
    static let name = "gateway"
    let action: Action

    enum Action {
        case devices(JSONObject)
        case device(String)
        case stats
        case readings
    }

    init(_ arguments: inout ArgumentCursor) throws(UsageError) {
        switch try arguments.positional("devices, device, stats or readings") {
        case "devices":
            var params = JSONObject()
            if let kind = try arguments.values("--kind").last { params["kind"] = .string(kind) }
            if let sort = try arguments.values("--sort").last { params["sort"] = .string(sort) }
            for option in ["--limit", "--offset"] {
                guard let text = try arguments.values(option).last else { continue }
                guard let number = Int64(text), number >= 0 else {
                    throw UsageError("\(option) takes a whole number, not \"\(text)\"")
                }
                params[String(option.dropFirst(2))] = .int(number)
            }
            action = .devices(params)
        case "device": action = .device(try arguments.positional("ADDRESS"))
        case "stats": action = .stats
        case "readings": action = .readings
        case let other: throw UsageError("gateway takes devices, device, stats or readings, not \"\(other)\"")
        }
    }

    func run(_ context: RunContext) throws(ClientFailure) -> Int32 {
        let client = try context.connect()
        switch action {
        case .devices(let params):
            let result = try client.call("gateway.devices", params: params.isEmpty ? nil : .object(params))
            context.show(result, human: GatewayTables.devices)
        case .device(let address):
            let result = try client.call("gateway.device", params: ["address": .string(address)])
            context.show(result, human: GatewayTables.device)
        case .stats:
            context.show(try client.call("gateway.stats"), human: GatewayTables.stats)
        case .readings:
            _ = try client.call("events.subscribe", params: ["kinds": ["plugin"]])
            Output.write(2, "blectl: streaming the gateway's readings; interrupt to stop\n")
            while let (method, params) = try client.nextNotification() {
                guard method == ControlAPI.eventMethod, let data = params?["data"],
                    data["namespace"]?.stringValue == "gateway", data["name"]?.stringValue == "reading",
                    let reading = data["data"]
                else { continue }
                context.show(reading) { GatewayTables.readingLine($0) }
            }
        }
        return 0
    }
}

/// The gateway's results as text.
enum GatewayTables {
    static func devices(_ result: JSON) -> String {
        let now = unixMilliseconds()
        let rows = (result["devices"]?.arrayValue ?? []).map { device in
            [
                Output.cell(device["address"]), Output.cell(device["kind"]) + (device["encrypted"] == true ? "*" : ""),
                Output.cell(device["name"]), Output.cell(device["rssi"]), age(device["lastSeen"], now: now),
                (device["readings"]?.arrayValue ?? []).map(short).joined(separator: " "),
            ]
        }
        var text = Output.grid(["ADDRESS", "KIND", "NAME", "RSSI", "SEEN", "READINGS"], rows)
        let shown = result["devices"]?.arrayValue?.count ?? 0
        let offset = result["offset"]?.intValue ?? 0
        text += "\n\(shown) of \(Output.cell(result["total"])) devices"
        if shown > 0 { text += " (\(offset + 1)-\(offset + Int64(shown)))" }
        if let next = result["next"]?.intValue { text += "; next page: --offset \(next)" }
        return text + (rows.contains { $0[1].hasSuffix("*") } ? "\n* encrypted BTHome" : "")
    }

    static func device(_ device: JSON) -> String {
        let now = unixMilliseconds()
        let errors = (device["errors"]?.objectValue ?? JSONObject()).map { "\($0.key) \(Output.cell($0.value))" }
        var rows: [(String, String)] = [
            ("address", Output.cell(device["address"])), ("name", Output.cell(device["name"])),
            ("kind", Output.cell(device["kind"]) + (device["encrypted"] == true ? " (encrypted)" : "")),
            ("rssi", "\(Output.cell(device["rssi"])) dBm smoothed, \(Output.cell(device["lastRssi"])) last"),
            ("first seen", age(device["firstSeen"], now: now)), ("last seen", age(device["lastSeen"], now: now)),
            (
                "reports",
                "\(Output.cell(device["reports"])) heard, \(Output.cell(device["decoded"])) decoded, "
                    + "\(Output.cell(device["duplicates"])) repeats dropped"
            ),
            ("errors", errors.isEmpty ? "none" : errors.joined(separator: ", ")),
        ]
        if let last = device["lastError"], last != .null {
            rows.append(("last error", "\(Output.cell(last["message"])) (\(age(last["at"], now: now)))"))
        }
        if device["firmware"] != .null { rows.append(("firmware", Output.cell(device["firmware"]))) }
        let readings = (device["readings"]?.arrayValue ?? []).map { reading in
            [Output.cell(reading["name"]), Output.cell(reading["kind"]), value(reading), age(reading["at"], now: now)]
        }
        return Output.table(rows) + "\n\n" + Output.grid(["READING", "KIND", "VALUE", "AGE"], readings)
    }

    static func stats(_ stats: JSON) -> String {
        let errors = (stats["decodeErrors"]?.objectValue ?? JSONObject()).map { "\($0.key) \(Output.cell($0.value))" }
        return Output.table([
            ("reports in", "\(Output.cell(stats["reportsIn"])) (\(Output.cell(stats["discoveries"])) discoveries)"),
            ("decoded", Output.cell(stats["decoded"])),
            ("duplicates dropped", Output.cell(stats["duplicatesDropped"])),
            ("decode errors", errors.isEmpty ? "none" : errors.joined(separator: ", ")),
            ("unknown format", Output.cell(stats["unknownFormat"])), ("filtered", Output.cell(stats["filtered"])),
            ("devices", "\(Output.cell(stats["devices"])) of at most \(Output.cell(stats["maxDevices"]))"),
            ("evicted / expired", "\(Output.cell(stats["devicesEvicted"])) / \(Output.cell(stats["devicesExpired"]))"),
            (
                "updates",
                "\(Output.cell(stats["updatesPublished"])) published, "
                    + "\(Output.cell(stats["updatesCoalesced"])) coalesced"
            ),
            ("bind keys", Output.cell(stats["bindKeys"])),
        ])
    }

    /// One `reading` event: `ADDRESS NAME  temperature=21.5°C humidity=45.2%`.
    static func readingLine(_ update: JSON) -> String {
        let readings = (update["readings"]?.arrayValue ?? []).map(short).joined(separator: " ")
        return "\(Output.cell(update["address"])) \(Output.cell(update["name"]))  \(readings)"
    }

    /// `temperature=21.5°C`.
    static func short(_ reading: JSON) -> String {
        "\(Output.cell(reading["name"]))=\(value(reading))"
    }

    static func value(_ reading: JSON) -> String {
        var text = Output.cell(reading["value"])
        // 87, not 87.0: values are doubles in JSON, whole ones read better without the fraction.
        if case .double(let number)? = reading["value"], number == number.rounded(), abs(number) < 1e15 {
            text = String(Int64(number))
        }
        if let unit = reading["unit"]?.stringValue { text += unit == "%" || unit.hasPrefix("°") ? unit : " \(unit)" }
        if let steps = reading["steps"]?.intValue { text += " \(steps) steps" }
        if let arguments = reading["arguments"]?.stringValue, !arguments.isEmpty { text += " (\(arguments))" }
        return text
    }

    /// `4s ago` from Unix milliseconds.
    static func age(_ unixMilliseconds: JSON?, now: Int64) -> String {
        guard let then = unixMilliseconds?.intValue else { return "-" }
        return Output.duration(seconds: max(0, (now - then) / 1000)) + " ago"
    }

    static func unixMilliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }
}
