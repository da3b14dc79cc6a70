import ControlProtocol
import JSON

/// `blectl scan start|stop`: central.scan.start / central.scan.stop.
struct ScanCommand: BlectlCommand {
    static let name = "scan"
    let call: StartStopCall

    init(_ arguments: inout ArgumentCursor) throws(UsageError) {
        call = try StartStopCall(
            &arguments, command: Self.name, start: ("central.scan.start", "scanning"),
            stop: ("central.scan.stop", "scan stopped")
        ) { (arguments: inout ArgumentCursor, params: inout JSONObject) throws(UsageError) in
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
        }
    }

    func run(_ context: RunContext) throws(ClientFailure) -> Int32 { try call.run(context) }
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

/// A command taking one DEVICE and calling one device-scoped method with `{"id": DEVICE}`.
protocol SingleDeviceCommand: BlectlCommand {
    /// The method called.
    static var method: String { get }
    /// The device id, validated.
    var device: String { get }
    init(device: String)
    /// The human-readable result.
    func human(_ result: JSON) -> String
}

extension SingleDeviceCommand {
    init(_ arguments: inout ArgumentCursor) throws(UsageError) {
        self.init(device: try Validate.device(try arguments.positional("DEVICE")))
    }

    func run(_ context: RunContext) throws(ClientFailure) -> Int32 {
        try DeviceCall(method: Self.method, params: ["id": .string(device)]).run(context) { human($0) }
    }
}

/// `blectl connect DEVICE`.
struct ConnectCommand: SingleDeviceCommand {
    static let name = "connect"
    static let method = "central.connect"
    let device: String
    func human(_ result: JSON) -> String { "connected to \(device)" }
}

/// `blectl disconnect DEVICE`.
struct DisconnectCommand: SingleDeviceCommand {
    static let name = "disconnect"
    static let method = "central.disconnect"
    let device: String
    func human(_ result: JSON) -> String { "disconnected from \(device)" }
}

/// `blectl services DEVICE`.
struct ServicesCommand: SingleDeviceCommand {
    static let name = "services"
    static let method = "central.services"
    let device: String
    func human(_ result: JSON) -> String { Output.servicesGrid(result) }
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
