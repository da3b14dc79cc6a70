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

    /// The params the method declares: the agent checks every call against
    /// them before the handler runs (a refused call reaches no handler), and
    /// the query types below read them through the same schema.
    public var params: ParamSchema {
        switch self {
        case .devices:
            .object(
                .optional("kind", .oneOf(DeviceKind.allCases.map(\.rawValue))),
                .optional("sort", .oneOf(DeviceOrder.allCases.map(\.rawValue))),
                .optional("offset", .integer(0...1_000_000)), .optional("limit", .integer(1...1000)))
        case .device:
            .object(
                .required(
                    "address",
                    .custom("a device address AA:BB:CC:DD:EE:FF") { $0.stringValue.flatMap(DeviceAddress.init) != nil })
            )
        case .stats: .none
        }
    }

    /// `params` as this method's schema accepts them, or -32602 naming each problem.
    public func arguments(_ params: JSON?) throws(PluginMethodError) -> ParamValues {
        do {
            return try self.params.validate(params)
        } catch {
            throw .invalidParams(error)
        }
    }
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

    /// Reads params ``GatewayMethod/devices``' schema accepted.
    public init(arguments: ParamValues) {
        kind = arguments.string("kind").flatMap(DeviceKind.init(rawValue:))
        order = arguments.string("sort").flatMap(DeviceOrder.init(rawValue:)) ?? .address
        offset = arguments.int("offset").map { Int($0) } ?? 0
        limit = arguments.int("limit").map { Int($0) } ?? 100
    }

    /// Checks `params` against the schema and reads them; -32602 naming each problem.
    public init(params: JSON?) throws(PluginMethodError) {
        self.init(arguments: try GatewayMethod.devices.arguments(params))
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

    /// Reads params ``GatewayMethod/device``'s schema accepted; nil if it did not.
    public init?(arguments: ParamValues) {
        guard let address = arguments.string("address").flatMap(DeviceAddress.init) else { return nil }
        self.address = address
    }

    /// Checks `params` against the schema and reads them; -32602 naming each problem.
    public init(params: JSON?) throws(PluginMethodError) {
        guard let query = DeviceQuery(arguments: try GatewayMethod.device.arguments(params)) else {
            throw .invalidParams("address: expected a device address AA:BB:CC:DD:EE:FF")
        }
        self = query
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
