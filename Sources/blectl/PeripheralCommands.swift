import ControlProtocol
import JSON

/// `blectl advertise start [--name NAME] [--service UUID]...` / `advertise stop`.
struct AdvertiseCommand: BlectlCommand {
    static let name = "advertise"
    let call: StartStopCall

    init(_ arguments: inout ArgumentCursor) throws(UsageError) {
        call = try StartStopCall(
            &arguments, command: Self.name, start: ("peripheral.advertising.start", "advertising"),
            stop: ("peripheral.advertising.stop", "advertising stopped")
        ) { (arguments: inout ArgumentCursor, params: inout JSONObject) throws(UsageError) in
            if let name = try arguments.values("--name").last { params["localName"] = .string(name) }
            let services = try arguments.values("--service").map { (text: String) throws(UsageError) in
                JSON.string(try Validate.uuid(text))
            }
            if !services.isEmpty { params["services"] = .array(services) }
        }
    }

    func run(_ context: RunContext) throws(ClientFailure) -> Int32 { try call.run(context) }
}

/// `blectl published`: peripheral.services as a table.
struct PublishedCommand: BlectlCommand {
    static let name = "published"
    init(_ arguments: inout ArgumentCursor) throws(UsageError) {}

    func run(_ context: RunContext) throws(ClientFailure) -> Int32 {
        let result = try context.connect().call("peripheral.services")
        context.show(result) { Output.servicesGrid($0) }
        return 0
    }
}

/// `blectl update CHARACTERISTIC VALUE [--hex]`: peripheral.update.
struct UpdateCommand: BlectlCommand {
    static let name = "update"
    let params: JSON
    init(_ arguments: inout ArgumentCursor) throws(UsageError) {
        let hex = arguments.flag("--hex")
        let characteristic = try Validate.uuid(try arguments.positional("CHARACTERISTIC"))
        let text = try arguments.positional("VALUE")
        let value = hex ? try Validate.hexBytes(text) : Validate.hex(ofText: text)
        params = ["characteristic": .string(characteristic), "value": .string(value)]
    }
    func run(_ context: RunContext) throws(ClientFailure) -> Int32 {
        let result = try context.connect().call("peripheral.update", params: params)
        context.show(result) { result in
            result["queued"] == .bool(false)
                ? "not sent: the transmit queue is full" : "notified \(Output.cell(result["notified"])) subscriber(s)"
        }
        return 0
    }
}

/// `blectl subscribers [CHARACTERISTIC]`: peripheral.subscribers as a table.
struct SubscribersCommand: BlectlCommand {
    static let name = "subscribers"
    let params: JSON?
    init(_ arguments: inout ArgumentCursor) throws(UsageError) {
        if let text = arguments.optionalPositional() {
            params = ["characteristic": .string(try Validate.uuid(text))]
        } else {
            params = nil
        }
    }
    func run(_ context: RunContext) throws(ClientFailure) -> Int32 {
        let result = try context.connect().call("peripheral.subscribers", params: params)
        context.show(result) { result in
            let rows = (result["subscribers"]?.arrayValue ?? []).map { row in
                ["id", "characteristic", "mtu"].map { Output.cell(row[$0]) }
            }
            return Output.grid(["CENTRAL", "CHARACTERISTIC", "MTU"], rows)
        }
        return 0
    }
}
