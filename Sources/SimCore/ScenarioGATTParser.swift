import GATT

/// The `gatt` object of a scenario device (docs/blesim.md, "GATT databases").
extension Scenario {
    static func parseGATT(_ field: ScenarioField) throws(ScenarioError) -> GATTDatabaseSpec {
        let keys = try field.object(allowing: ["services"])
        let fields = try keys["services"]?.array() ?? []
        let services = try fields.map { (item) throws(ScenarioError) in try parseService(item) }
        // Included services name others of the same database by index.
        for (index, service) in services.enumerated() {
            for (position, included) in service.includes.enumerated()
            where included == index || !services.indices.contains(included) {
                throw ScenarioError(
                    path: fields[index].child("includes") + "[\(position)]",
                    message: "expected the index of another service of this database (0...\(services.count - 1))")
            }
        }
        return GATTDatabaseSpec(services: services)
    }

    private static func parseService(_ field: ScenarioField) throws(ScenarioError) -> GATTServiceSpec {
        let keys = try field.object(allowing: ["uuid", "primary", "includes", "characteristics", "description"])
        guard let uuid = keys["uuid"] else { throw ScenarioError(path: field.child("uuid"), message: "missing") }
        var service = GATTServiceSpec(uuid: try uuid.uuid(), characteristics: [])
        if let primary = keys["primary"] { service.primary = try primary.bool() }
        if let includes = keys["includes"] {
            service.includes = try includes.array().map { (item) throws(ScenarioError) in
                Int(try item.integer(in: 0...255))
            }
        }
        if let list = keys["characteristics"] {
            service.characteristics = try list.array().map { (item) throws(ScenarioError) in
                try parseCharacteristic(item)
            }
        }
        return service
    }

    private static func parseCharacteristic(_ field: ScenarioField) throws(ScenarioError) -> GATTCharacteristicSpec {
        let keys = try field.object(allowing: ["uuid", "flags", "value", "behaviour", "descriptors", "description"])
        guard let uuid = keys["uuid"] else { throw ScenarioError(path: field.child("uuid"), message: "missing") }
        guard let flagsField = keys["flags"] else {
            throw ScenarioError(path: field.child("flags"), message: "missing")
        }
        let names = try flagsField.array().map { (item) throws(ScenarioError) in try item.string() }
        let flags = BlueZGATTFlags.Characteristic(bluezFlags: names)
        if let unknown = flags.unknownFlags.first { throw flagsField.error("unknown flag \"\(unknown)\"") }
        var chrc = GATTCharacteristicSpec(uuid: try uuid.uuid(), flags: flags)
        if let value = keys["value"] { chrc.value = try parseValue(value) }
        if let behaviour = keys["behaviour"] { chrc.behaviour = try parseBehaviour(behaviour) }
        if let list = keys["descriptors"] {
            chrc.descriptors = try list.array().map { (item) throws(ScenarioError) in
                let entry = try item.object(allowing: ["uuid", "value", "writable"])
                guard let uuid = entry["uuid"] else {
                    throw ScenarioError(path: item.child("uuid"), message: "missing")
                }
                var descriptor = GATTDescriptorSpec(uuid: try uuid.uuid())
                if let value = entry["value"] { descriptor.value = try parseValue(value) }
                if let writable = entry["writable"] { descriptor.writable = try writable.bool() }
                return descriptor
            }
        }
        return chrc
    }

    /// A value: a hex string (`"0648"`), or `{ "hex": "..." }`, `{ "utf8": "..." }`, or
    /// `{ "int": N, "format": "uint8" | "uint16" | "uint32" | "int8" | "int16" | "int32" }`.
    static func parseValue(_ field: ScenarioField) throws(ScenarioError) -> [UInt8] {
        if case .string = field.value { return try checkedLength(field, try field.hexBytes()) }
        let keys = try field.object(allowing: ["hex", "utf8", "int", "format"])
        let bytes: [UInt8]
        switch (keys["hex"], keys["utf8"], keys["int"]) {
        case (let hex?, nil, nil): bytes = try hex.hexBytes()
        case (nil, let text?, nil): bytes = Array(try text.string().utf8)
        case (nil, nil, let number?):
            let format = try parseFormat(keys["format"], in: field)
            bytes = format.encode(try number.integer(in: format.range))
        default: throw field.error("expected one of hex, utf8, int")
        }
        return try checkedLength(field, bytes)
    }

    private static func checkedLength(_ field: ScenarioField, _ bytes: [UInt8]) throws(ScenarioError) -> [UInt8] {
        guard bytes.count <= GATTServer.maximumValueLength else { throw field.error("longer than 512 bytes") }
        return bytes
    }

    private static func parseFormat(
        _ field: ScenarioField?, in parent: ScenarioField
    ) throws(ScenarioError)
        -> IntegerFormat
    {
        guard let field else { throw ScenarioError(path: parent.child("format"), message: "missing") }
        let name = try field.string()
        guard let format = IntegerFormat(rawValue: name) else {
            throw field.error("expected one of \(IntegerFormat.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return format
    }

    /// `{ "counter": { "start", "step", "format" }, "everyMs" }`, `{ "cycle": [values], "everyMs" }`
    /// or `{ "script": [ { "at": seconds, "value": value } ], "loop": bool }`.
    private static func parseBehaviour(_ field: ScenarioField) throws(ScenarioError) -> ValueBehaviour {
        let keys = try field.object(allowing: ["counter", "cycle", "script", "everyMs", "loop"])
        func period() throws(ScenarioError) -> Double {
            guard let every = keys["everyMs"] else {
                throw ScenarioError(path: field.child("everyMs"), message: "missing")
            }
            return try every.number(in: 1...3_600_000) / 1000
        }
        switch (keys["counter"], keys["cycle"], keys["script"]) {
        case (let counter?, nil, nil):
            let entry = try counter.object(allowing: ["start", "step", "format"])
            let format = try parseFormat(entry["format"], in: counter)
            return .counter(
                start: try entry["start"]?.integer(in: format.range) ?? 0,
                step: try entry["step"]?.integer(in: -0xFFFF_FFFF...0xFFFF_FFFF) ?? 1, format: format,
                periodSeconds: try period())
        case (nil, let cycle?, nil):
            let values = try cycle.array().map { (item) throws(ScenarioError) in try parseValue(item) }
            guard !values.isEmpty else { throw cycle.error("expected at least one value") }
            return .cycle(values: values, periodSeconds: try period())
        case (nil, nil, let script?):
            let steps = try script.array().map { (item) throws(ScenarioError) -> (at: Double, value: [UInt8]) in
                let entry = try item.object(allowing: ["at", "value"])
                guard let at = entry["at"], let value = entry["value"] else {
                    throw item.error("expected at and value")
                }
                return (try at.number(in: 0...1e9), try parseValue(value))
            }
            guard !steps.isEmpty else { throw script.error("expected at least one step") }
            for (index, pair) in zip(steps, steps.dropFirst()).enumerated() where pair.1.at <= pair.0.at {
                throw ScenarioError(path: "\(script.path)[\(index + 1)].at", message: "times must increase")
            }
            return .script(steps, loop: try keys["loop"]?.bool() ?? false)
        default: throw field.error("expected one of counter, cycle, script")
        }
    }
}
