import JSON

extension Scenario {
    /// Parses a scenario file (format: docs/blesim.md). Errors name the field, for example
    /// `devices[2].rssi.distance: expected a number`; JSON syntax errors give line and column.
    public static func parse(_ text: String) throws(ScenarioError) -> Scenario {
        let json: JSON
        do {
            json = try JSON(parsing: text)
        } catch {
            throw ScenarioError(path: "", message: "not JSON: \(error)")
        }
        return try parse(json)
    }

    /// Reads a scenario from a parsed JSON value.
    public static func parse(_ json: JSON) throws(ScenarioError) -> Scenario {
        let top = try ScenarioField(value: json, path: "").object(allowing: [
            "seed", "temporaryTimeout", "adapters", "devices", "description", "connectFailSeconds", "connectSeconds",
            "mtu", "attTimeout", "link", "faults", "advertiseWhileConnected", "centrals",
        ])
        var scenario = Scenario(adapters: [.standard(index: 0)], devices: [])
        if let seed = top["seed"] { scenario.seed = UInt64(try seed.integer(in: 0...Int64.max)) }
        if let timeout = top["temporaryTimeout"] { scenario.temporaryTimeout = try timeout.number(in: 0...86_400) }
        if let seconds = top["connectFailSeconds"] { scenario.connectFailSeconds = try seconds.number(in: 0...120) }
        if let seconds = top["connectSeconds"] { scenario.connectSeconds = try seconds.number(in: 0...30) }
        if let mtu = top["mtu"] { scenario.mtu = UInt16(try mtu.integer(in: 23...517)) }
        if let timeout = top["attTimeout"] { scenario.attTimeout = try timeout.number(in: 0...600) }
        if let flag = top["advertiseWhileConnected"] { scenario.advertiseWhileConnected = try flag.bool() }
        if let link = top["link"] { scenario.link = try parseLink(link) }
        if let adapters = top["adapters"] { scenario.adapters = try parseAdapters(adapters) }
        if let devices = top["devices"] {
            var seen: Set<DeviceAddress> = []
            for field in try devices.array() {
                for device in try parseDevices(field) {
                    guard seen.insert(device.address).inserted else {
                        throw ScenarioError(
                            path: field.child("address"), message: "duplicate address \(device.address)")
                    }
                    scenario.devices.append(device)
                }
            }
        }
        if let faults = top["faults"] { scenario.faults = try parseFaults(faults, in: scenario) }
        if let centrals = top["centrals"] {
            scenario.centrals = try parseCentrals(centrals, adapterCount: scenario.adapters.count)
        }
        return scenario
    }

    private static func parseAdapters(_ field: ScenarioField) throws(ScenarioError) -> [AdapterSpec] {
        if case .int = field.value {
            let count = try field.integer(in: 1...16)
            return (0..<Int(count)).map(AdapterSpec.standard(index:))
        }
        let items = try field.array()
        guard !items.isEmpty else { throw field.error("expected at least one adapter") }
        return try items.enumerated().map { (index, item) throws(ScenarioError) in
            let keys = try item.object(allowing: [
                "address", "name", "addressType", "position", "powered", "sensitivity",
            ])
            guard let address = keys["address"] else {
                throw ScenarioError(path: item.child("address"), message: "missing")
            }
            var spec = AdapterSpec.standard(index: index)
            spec = AdapterSpec(address: try address.address(), name: spec.name)
            if let name = keys["name"] { spec.name = try name.string() }
            if let type = keys["addressType"] { spec.addressType = try type.addressType() }
            if let position = keys["position"] { spec.position = try position.position() }
            if let powered = keys["powered"] { spec.powered = try powered.bool() }
            if let sensitivity = keys["sensitivity"] { spec.sensitivity = Int(try sensitivity.integer(in: -127...20)) }
            return spec
        }
    }

    /// One entry of `devices`: a device, or its copies when it has `repeat`.
    private static func parseDevices(_ field: ScenarioField) throws(ScenarioError) -> [VirtualDevice] {
        let device = try parseDevice(field)
        guard case .object(let object) = field.value, let spec = object["repeat"] else { return [device] }
        return try repeated(
            device, ScenarioField(value: spec, path: field.child("repeat")),
            namePath: field.child("advertising") + ".name")
    }

    private static func parseDevice(_ field: ScenarioField) throws(ScenarioError) -> VirtualDevice {
        let keys = try field.object(allowing: [
            "address", "addressType", "intervalMs", "connectable", "advertising", "rssi", "gatt", "description",
            "paymentTerminal", "repeat", "sensor",
        ])
        guard let address = keys["address"] else {
            throw ScenarioError(path: field.child("address"), message: "missing")
        }
        var device = VirtualDevice(address: try address.address(), advertisement: Advertisement())
        if let type = keys["addressType"] { device.addressType = try type.addressType() }
        if let interval = keys["intervalMs"] { device.intervalMilliseconds = try interval.number(in: 20...10_240) }
        if let connectable = keys["connectable"] { device.connectable = try connectable.bool() }
        if let advertising = keys["advertising"] { device.advertisement = try parseAdvertisement(advertising) }
        if let rssi = keys["rssi"] { device.radio = try parseRadio(rssi) }
        if let gatt = keys["gatt"] {
            device.gatt = try parseGATT(gatt)
        }
        if let description = keys["description"] { _ = try description.string() }
        if let sensor = keys["sensor"] {
            let simulated = try parseSensor(sensor)
            var largest = device.advertisement
            largest.serviceData.removeAll { $0.uuid == simulated.uuid }
            largest.serviceData.append(
                ServiceDatum(uuid: simulated.uuid, data: Array(repeating: 0, count: simulated.longestServiceData)))
            if let problem = largest.sizeProblem { throw sensor.error("with the advertising: \(problem)") }
            device.sensor = simulated
        }
        if let config = keys["paymentTerminal"] {
            guard keys["gatt"] == nil else { throw config.error("a payment terminal's GATT is the profile's: no gatt") }
            let terminal = try parsePaymentTerminal(config)
            device.terminal = terminal
            device.gatt = GATTDatabaseSpec(terminal: terminal)
        }
        return device
    }

    private static func parseAdvertisement(_ field: ScenarioField) throws(ScenarioError) -> Advertisement {
        let keys = try field.object(allowing: [
            "flags", "name", "nameComplete", "serviceUUIDs", "manufacturerData", "serviceData", "txPower", "appearance",
        ])
        var ad = Advertisement()
        if let flags = keys["flags"] {
            ad.flags = flags.value == .null ? nil : UInt8(try flags.integer(in: 0...255))
        }
        if let name = keys["name"] { ad.name = try name.string() }
        if let complete = keys["nameComplete"] { ad.nameIsComplete = try complete.bool() }
        if let uuids = keys["serviceUUIDs"] {
            ad.serviceUUIDs = try uuids.array().map { (item) throws(ScenarioError) in try item.uuid() }
        }
        if let data = keys["manufacturerData"] {
            ad.manufacturerData = try data.array().map { (item) throws(ScenarioError) in
                let entry = try item.object(allowing: ["company", "data"])
                guard let company = entry["company"] else {
                    throw ScenarioError(path: item.child("company"), message: "missing")
                }
                guard let bytes = entry["data"] else {
                    throw ScenarioError(path: item.child("data"), message: "missing")
                }
                return ManufacturerDatum(
                    company: UInt16(try company.integerOrHex(in: 0...0xFFFF)), data: try bytes.hexBytes())
            }
        }
        if let data = keys["serviceData"] {
            ad.serviceData = try data.array().map { (item) throws(ScenarioError) in
                let entry = try item.object(allowing: ["uuid", "data"])
                guard let uuid = entry["uuid"] else {
                    throw ScenarioError(path: item.child("uuid"), message: "missing")
                }
                guard let bytes = entry["data"] else {
                    throw ScenarioError(path: item.child("data"), message: "missing")
                }
                return ServiceDatum(uuid: try uuid.uuid(), data: try bytes.hexBytes())
            }
        }
        if let tx = keys["txPower"] { ad.txPower = Int8(try tx.integer(in: -127...127)) }
        if let appearance = keys["appearance"] { ad.appearance = UInt16(try appearance.integer(in: 0...0xFFFF)) }
        if let problem = ad.sizeProblem { throw field.error(problem) }
        return ad
    }

    private static func parseRadio(_ field: ScenarioField) throws(ScenarioError) -> RadioModel {
        let keys = try field.object(allowing: [
            "atOneMetre", "pathLossExponent", "noise", "distance", "position", "waypoints", "loop",
        ])
        var radio = RadioModel()
        if let power = keys["atOneMetre"] { radio.rssiAtOneMetre = try power.number(in: -127...20) }
        if let exponent = keys["pathLossExponent"] { radio.pathLossExponent = try exponent.number(in: 1...6) }
        if let noise = keys["noise"] { radio.noise = try noise.number(in: 0...30) }
        let placements = ["distance", "position", "waypoints"].filter { keys[$0] != nil }
        guard placements.count <= 1 else {
            throw ScenarioError(path: field.child(placements[1]), message: "give one of distance, position, waypoints")
        }
        if let distance = keys["distance"] {
            radio.path = .fixed(Position(x: try distance.number(in: 0...100_000), y: 0))
        }
        if let position = keys["position"] { radio.path = .fixed(try position.position()) }
        if let waypoints = keys["waypoints"] {
            let points = try waypoints.array().map { (item) throws(ScenarioError) in try parseWaypoint(item) }
            guard !points.isEmpty else { throw waypoints.error("expected at least one waypoint") }
            for (index, pair) in zip(points, points.dropFirst()).enumerated() where pair.1.at <= pair.0.at {
                throw ScenarioError(path: "\(waypoints.path)[\(index + 1)].at", message: "times must increase")
            }
            let loop = try keys["loop"]?.bool() ?? false
            radio.path = .waypoints(points, loop: loop)
        } else if let loop = keys["loop"] {
            throw loop.error("only with waypoints")
        }
        return radio
    }

    private static func parseWaypoint(_ field: ScenarioField) throws(ScenarioError) -> Waypoint {
        let keys = try field.object(allowing: ["at", "distance", "position"])
        guard let at = keys["at"] else { throw ScenarioError(path: field.child("at"), message: "missing") }
        let seconds = try at.number(in: 0...1e9)
        switch (keys["distance"], keys["position"]) {
        case (let distance?, nil):
            return Waypoint(at: seconds, position: Position(x: try distance.number(in: 0...100_000), y: 0))
        case (nil, let position?): return Waypoint(at: seconds, position: try position.position())
        default: throw field.error("expected one of distance or position")
        }
    }
}
