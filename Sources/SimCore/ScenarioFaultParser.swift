import GATT

/// The scenario's `faults` list and `link` object (format: docs/blesim.md, "Scheduled faults"
/// and "The link model").
extension Scenario {
    /// Fault kinds a scenario schedules, with the keys each takes besides `at`, `after`, `fault`.
    static let faultKeys: [String: Set<String>] = [
        "dropLink": ["device"],
        "failNext": ["device", "uuid", "count", "error", "message"],
        "delay": ["device", "seconds"],
        "clear": [],
        "silence": ["device", "silenced"],
        "move": ["device", "distance"],
        "powerCycle": ["adapter", "seconds"],
        "unsignalledConnect": ["device"],
    ]

    /// Reads `faults`, checking devices and adapters against the parsed scenario.
    static func parseFaults(_ field: ScenarioField, in scenario: Scenario) throws(ScenarioError) -> [ScheduledFault] {
        let known = Set(scenario.devices.map(\.address))
        var out: [ScheduledFault] = []
        for item in try field.array() {
            out += try parseFault(item, knownDevices: known, adapterCount: scenario.adapters.count)
        }
        return out
    }

    private static func parseFault(
        _ item: ScenarioField, knownDevices: Set<DeviceAddress>, adapterCount: Int
    ) throws(ScenarioError) -> [ScheduledFault] {
        guard case .object(let object) = item.value else { throw item.error("expected an object") }
        guard let kindValue = object["fault"] else {
            throw ScenarioError(path: item.child("fault"), message: "missing")
        }
        let kind = try ScenarioField(value: kindValue, path: item.child("fault")).string()
        guard let extra = faultKeys[kind] else {
            throw ScenarioError(
                path: item.child("fault"),
                message:
                    "unknown fault \"\(kind)\" (expected one of \(faultKeys.keys.sorted().joined(separator: ", ")))")
        }
        let keys = try item.object(allowing: extra.union(["at", "after", "fault", "description"]))
        let at = try keys["at"].map { (field) throws(ScenarioError) in try field.number(in: 0...1e9) } ?? 0
        func device() throws(ScenarioError) -> DeviceAddress {
            guard let field = keys["device"] else {
                throw ScenarioError(path: item.child("device"), message: "missing")
            }
            let address = try field.address()
            guard knownDevices.contains(address) else { throw field.error("no device \(address) in this scenario") }
            return address
        }
        var trigger = ScheduledFault.Trigger.start
        if let after = keys["after"] {
            switch try after.string() {
            case "start": break
            case "connect": trigger = .connect(try device())
            default: throw after.error("expected \"start\" or \"connect\"")
            }
        }
        switch kind {
        case "dropLink": return [ScheduledFault(trigger: trigger, after: at, fault: .dropLink(try device()))]
        case "unsignalledConnect":
            return [ScheduledFault(trigger: trigger, after: at, fault: .unsignalledConnect(try device()))]
        case "failNext":
            let address = try device()
            let uuid = try keys["uuid"].map { (field) throws(ScenarioError) in try field.uuid() }
            let count = Int(try keys["count"]?.integer(in: 1...1_000_000) ?? 1)
            guard let errorField = keys["error"] else {
                throw ScenarioError(path: item.child("error"), message: "missing")
            }
            let name = try errorField.string()
            let action: FaultPlan.Action
            if name == "timeout" {
                action = .timeout
            } else {
                guard name.split(separator: ".").count >= 2 else {
                    throw errorField.error("expected a D-Bus error name like \"org.bluez.Error.Failed\" or \"timeout\"")
                }
                let message = try keys["message"]?.string()
                action = .error(BlueZError(BlueZError.Name(rawValue: name), message.flatMap { $0.isEmpty ? nil : $0 }))
            }
            let rule = FaultPlan.Rule(address: address, uuid: uuid, remaining: count, action: action)
            return [ScheduledFault(trigger: trigger, after: at, fault: .failNext(rule))]
        case "delay":
            guard let seconds = keys["seconds"] else {
                throw ScenarioError(path: item.child("seconds"), message: "missing")
            }
            let fault = Fault.delay(try device(), seconds: try seconds.number(in: 0...600))
            return [ScheduledFault(trigger: trigger, after: at, fault: fault)]
        case "clear": return [ScheduledFault(trigger: trigger, after: at, fault: .clear)]
        case "silence":
            let on = try keys["silenced"]?.bool() ?? true
            return [ScheduledFault(trigger: trigger, after: at, fault: .silence(try device(), on))]
        case "move":
            guard let distance = keys["distance"] else {
                throw ScenarioError(path: item.child("distance"), message: "missing")
            }
            let fault = Fault.move(try device(), distance: try distance.number(in: 0...100_000))
            return [ScheduledFault(trigger: trigger, after: at, fault: fault)]
        default:  // powerCycle
            let adapter = Int(try keys["adapter"]?.integer(in: 0...15) ?? 0)
            guard adapter < adapterCount else {
                throw ScenarioError(path: item.child("adapter"), message: "no adapter hci\(adapter) in this scenario")
            }
            let off = try keys["seconds"]?.number(in: 0...600) ?? 0.5
            return [
                ScheduledFault(trigger: trigger, after: at, fault: .powered(adapter: adapter, false)),
                ScheduledFault(trigger: trigger, after: at + off, fault: .powered(adapter: adapter, true)),
            ]
        }
    }

    /// Reads `link`: `intervalMs`, `phy`, `packetsPerEvent`, `dataLength`.
    static func parseLink(_ field: ScenarioField) throws(ScenarioError) -> LinkModel {
        let keys = try field.object(allowing: ["intervalMs", "phy", "packetsPerEvent", "dataLength"])
        var model = LinkModel()
        if let interval = keys["intervalMs"] { model.connectionIntervalMs = try interval.number(in: 7.5...4000) }
        if let phy = keys["phy"] {
            let text = try phy.string()
            guard let value = LinkModel.PHY.allCases.first(where: { $0.rawValue.lowercased() == text.lowercased() })
            else { throw phy.error("expected \"1M\", \"2M\" or \"coded\"") }
            model.phy = value
        }
        if let packets = keys["packetsPerEvent"] { model.maxPacketsPerEvent = Int(try packets.integer(in: 1...64)) }
        if let length = keys["dataLength"] { model.dataLength = Int(try length.integer(in: 27...251)) }
        return model
    }
}
