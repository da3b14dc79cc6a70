import ControlProtocol
import JSON

/// `blectl scan start|stop`: central.scan.start / central.scan.stop (planned methods).
struct ScanCommand: BlectlCommand {
    static let name = "scan"
    let method: String
    let params: JSON?

    init(_ arguments: inout ArgumentCursor) throws(UsageError) {
        switch try arguments.positional("start or stop") {
        case "start":
            var params = JSONObject()
            if let duration = try arguments.values("--duration").last {
                params["durationSeconds"] = .int(try Validate.seconds(duration))
            }
            let services = try arguments.values("--service").map { (text: String) throws(UsageError) in
                JSON.string(try Validate.uuid(text))
            }
            if !services.isEmpty { params["services"] = .array(services) }
            if let rssi = try arguments.values("--rssi").last {
                guard let value = Int64(rssi), (-127...20).contains(value) else {
                    throw UsageError("\"\(rssi)\" is not an RSSI threshold in dBm (-127 to 20)")
                }
                params["rssiThreshold"] = .int(value)
            }
            if let pattern = try arguments.values("--name").last { params["namePattern"] = .string(pattern) }
            if arguments.flag("--duplicates") { params["allowDuplicates"] = true }
            method = "central.scan.start"
            self.params = params.isEmpty ? nil : .object(params)
        case "stop":
            method = "central.scan.stop"
            params = nil
        case let other:
            throw UsageError("scan takes start or stop, not \"\(other)\"")
        }
    }

    func run(_ context: RunContext) throws(ClientFailure) -> Int32 {
        let result = try context.connect().call(method, params: params)
        context.show(result) { _ in method == "central.scan.start" ? "scanning" : "scan stopped" }
        return 0
    }
}

/// `blectl devices`: central.devices as a table.
struct DevicesCommand: BlectlCommand {
    static let name = "devices"
    init(_ arguments: inout ArgumentCursor) throws(UsageError) {}

    func run(_ context: RunContext) throws(ClientFailure) -> Int32 {
        let result = try context.connect().call("central.devices")
        context.show(result) { result in
            let rows = (result["devices"]?.arrayValue ?? []).map { device in
                ["id", "name", "rssi", "connected"].map { Output.cell(device[$0]) }
            }
            return Output.grid(["ID", "NAME", "RSSI", "CONNECTED"], rows)
        }
        return 0
    }
}

/// A command that sends one device-scoped planned method.
struct DeviceCall {
    let method: String
    let params: JSON

    func run(_ context: RunContext, human: (JSON) -> String) throws(ClientFailure) -> Int32 {
        let result = try context.connect().call(method, params: params)
        context.show(result, human: human)
        return 0
    }
}

/// `blectl connect DEVICE`.
struct ConnectCommand: BlectlCommand {
    static let name = "connect"
    let device: String
    init(_ arguments: inout ArgumentCursor) throws(UsageError) {
        device = try Validate.device(try arguments.positional("DEVICE"))
    }
    func run(_ context: RunContext) throws(ClientFailure) -> Int32 {
        try DeviceCall(method: "central.connect", params: ["id": .string(device)]).run(context) { _ in
            "connected to \(device)"
        }
    }
}

/// `blectl disconnect DEVICE`.
struct DisconnectCommand: BlectlCommand {
    static let name = "disconnect"
    let device: String
    init(_ arguments: inout ArgumentCursor) throws(UsageError) {
        device = try Validate.device(try arguments.positional("DEVICE"))
    }
    func run(_ context: RunContext) throws(ClientFailure) -> Int32 {
        try DeviceCall(method: "central.disconnect", params: ["id": .string(device)]).run(context) { _ in
            "disconnected from \(device)"
        }
    }
}

/// `blectl services DEVICE`.
struct ServicesCommand: BlectlCommand {
    static let name = "services"
    let device: String
    init(_ arguments: inout ArgumentCursor) throws(UsageError) {
        device = try Validate.device(try arguments.positional("DEVICE"))
    }
    func run(_ context: RunContext) throws(ClientFailure) -> Int32 {
        try DeviceCall(method: "central.services", params: ["id": .string(device)]).run(context) {
            Output.servicesGrid($0)
        }
    }
}

/// `blectl read DEVICE CHARACTERISTIC`.
struct ReadCommand: BlectlCommand {
    static let name = "read"
    let device: String
    let characteristic: String
    init(_ arguments: inout ArgumentCursor) throws(UsageError) {
        device = try Validate.device(try arguments.positional("DEVICE"))
        characteristic = try Validate.uuid(try arguments.positional("CHARACTERISTIC"))
    }
    func run(_ context: RunContext) throws(ClientFailure) -> Int32 {
        let params: JSON = ["id": .string(device), "characteristic": .string(characteristic)]
        return try DeviceCall(method: "central.read", params: params).run(context) { Output.cell($0["value"]) }
    }
}

/// `blectl write DEVICE CHARACTERISTIC VALUE [--hex] [--without-response]`.
struct WriteCommand: BlectlCommand {
    static let name = "write"
    let params: JSON
    init(_ arguments: inout ArgumentCursor) throws(UsageError) {
        let hex = arguments.flag("--hex")
        let withoutResponse = arguments.flag("--without-response")
        let device = try Validate.device(try arguments.positional("DEVICE"))
        let characteristic = try Validate.uuid(try arguments.positional("CHARACTERISTIC"))
        let text = try arguments.positional("VALUE")
        let value = hex ? try Validate.hexBytes(text) : Validate.hex(ofText: text)
        params = [
            "id": .string(device), "characteristic": .string(characteristic), "value": .string(value),
            "withResponse": .bool(!withoutResponse),
        ]
    }
    func run(_ context: RunContext) throws(ClientFailure) -> Int32 {
        try DeviceCall(method: "central.write", params: params).run(context) { _ in "written" }
    }
}

/// `blectl subscribe DEVICE CHARACTERISTIC`: values stream until interrupted.
struct SubscribeCommand: BlectlCommand {
    static let name = "subscribe"
    let params: JSON
    init(_ arguments: inout ArgumentCursor) throws(UsageError) {
        let device = try Validate.device(try arguments.positional("DEVICE"))
        let characteristic = try Validate.uuid(try arguments.positional("CHARACTERISTIC"))
        params = ["id": .string(device), "characteristic": .string(characteristic)]
    }
    func run(_ context: RunContext) throws(ClientFailure) -> Int32 {
        let client = try context.connect()
        _ = try client.call("events.subscribe", params: ["kinds": ["value"]])
        _ = try client.call("central.subscribe", params: params)
        try EventPrinter(context: context).stream(client, only: .value)
        return 0
    }
}
