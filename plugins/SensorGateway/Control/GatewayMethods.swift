import JSON
import RoleKit

/// The gateway's control methods (docs/profiles/sensor-gateway.md, "Control
/// methods").
public enum GatewayMethod: String, Sendable, CaseIterable {
    /// The devices: `{kind?, sort?, offset?, limit?}`.
    case devices = "gateway.devices"
    /// One device: `{address}`.
    case device = "gateway.device"
    /// The counters: no params.
    case stats = "gateway.stats"
}

/// How `gateway.devices` orders devices.
public enum DeviceOrder: String, Sendable, CaseIterable {
    /// By address, ascending.
    case address
    /// By name, ascending; unnamed last.
    case name
    /// Strongest smoothed RSSI first; unknown last.
    case rssi
    /// Most recently heard first.
    case lastSeen
}

/// `gateway.devices`' params.
public struct DevicesQuery: Sendable, Hashable {
    /// Only devices of this kind.
    public var kind: DeviceKind?
    /// The order (default `address`).
    public var order: DeviceOrder = .address
    /// How many devices to skip (default 0).
    public var offset = 0
    /// At most this many (1...1000, default 100).
    public var limit = 100

    /// A query.
    public init(kind: DeviceKind? = nil, order: DeviceOrder = .address, offset: Int = 0, limit: Int = 100) {
        self.kind = kind
        self.order = order
        self.offset = offset
        self.limit = limit
    }

    /// Validates `params`; every error is -32602 naming the parameter.
    public init(params: JSON?) throws(PluginMethodError) {
        let object = try gatewayParams(params, allowed: ["kind", "sort", "offset", "limit"])
        if let value = object["kind"] {
            guard let text = value.stringValue, let kind = DeviceKind(rawValue: text) else {
                throw .invalidParams(
                    "kind: expected one of \(DeviceKind.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            self.kind = kind
        }
        if let value = object["sort"] {
            guard let text = value.stringValue, let order = DeviceOrder(rawValue: text) else {
                throw .invalidParams(
                    "sort: expected one of \(DeviceOrder.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            self.order = order
        }
        if let value = object["offset"] {
            guard let number = value.intValue, number >= 0, number <= 1_000_000 else {
                throw .invalidParams("offset: expected an integer from 0 to 1000000")
            }
            offset = Int(number)
        }
        if let value = object["limit"] {
            guard let number = value.intValue, (1...1000).contains(number) else {
                throw .invalidParams("limit: expected an integer from 1 to 1000")
            }
            limit = Int(number)
        }
    }

    /// The page of `devices` this query asks for, and how many matched.
    public func page(_ devices: [DeviceEntry]) -> (devices: ArraySlice<DeviceEntry>, total: Int) {
        let matching = kind.map { kind in devices.filter { $0.kind == kind } } ?? devices
        let sorted: [DeviceEntry]
        switch order {
        case .address: sorted = matching.sorted { $0.address < $1.address }
        case .name:
            sorted = matching.sorted {
                switch ($0.name, $1.name) {
                case (let left?, let right?): (left, $0.address) < (right, $1.address)
                case (nil, nil): $0.address < $1.address
                case (nil, _): false
                case (_, nil): true
                }
            }
        case .rssi: sorted = matching.sorted { ($0.rssi ?? -1000, $1.address) > ($1.rssi ?? -1000, $0.address) }
        case .lastSeen: sorted = matching.sorted { ($0.lastSeen, $1.address) > ($1.lastSeen, $0.address) }
        }
        let start = min(offset, sorted.count)
        return (sorted[start..<min(sorted.count, start + limit)], matching.count)
    }
}

/// `gateway.device`'s params.
public struct DeviceQuery: Sendable, Hashable {
    /// The device's address.
    public var address: DeviceAddress

    /// Validates `params`.
    public init(params: JSON?) throws(PluginMethodError) {
        let object = try gatewayParams(params, allowed: ["address"])
        guard let text = object["address"]?.stringValue, let address = DeviceAddress(text) else {
            throw .invalidParams("address: expected a device address AA:BB:CC:DD:EE:FF")
        }
        self.address = address
    }
}

/// The gateway's JSON-RPC error codes (outside the reserved range).
public enum GatewayError {
    /// 1101: gateway.device named a device the gateway does not hold.
    public static func unknownDevice(_ address: DeviceAddress) -> PluginMethodError {
        PluginMethodError(
            code: 1101, "no device \(address) in the gateway's table", data: ["address": .string(address.description)])
    }
}

/// Checks that `params` is absent, null or an object with only `allowed` keys.
public func gatewayParams(_ params: JSON?, allowed: Set<String>) throws(PluginMethodError) -> JSONObject {
    guard let params, !params.isNull else { return JSONObject() }
    guard let object = params.objectValue else { throw .invalidParams("params: expected an object") }
    for key in object.keys where !allowed.contains(key) { throw .invalidParams("\(key): unknown parameter") }
    return object
}
