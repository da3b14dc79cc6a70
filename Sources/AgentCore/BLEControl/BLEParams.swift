import BLE
import ControlProtocol
import GATT
import JSON
import RoleKit

/// Reading the params of the `central.*` / `peripheral.*` methods and turning
/// BLE values and errors into their JSON shapes (docs/control-api.md).
enum BLEParams {
    /// A device: the `PeripheralIdentifier` UUID `central.devices` lists.
    static let deviceID = ParamType.custom("a device id (a UUID from central.devices)") { value in
        value.stringValue.flatMap(PeripheralIdentifier.init) != nil
    }
    /// An attribute value: at most 512 bytes (ATT's longest), as hex.
    static let value = ParamType.hex(maxBytes: 512)
    /// An attribute value as UTF-8 text (may be empty: a zero-length write).
    static let text = ParamType.string(maxBytes: 512, allowEmpty: true)
    /// Service UUIDs to filter or advertise.
    static let services = ParamType.array(of: .uuid, count: 0...64)

    /// `{"id"}`.
    static let device = ParamSchema.object(.required("id", deviceID))
    /// `{"id", "service"?, "characteristic"}`.
    static let characteristic = ParamSchema.object(
        .required("id", deviceID), .optional("service", .uuid), .required("characteristic", .uuid))

    static func identifier(_ call: MethodCall) -> PeripheralIdentifier? {
        call.arguments.string("id").flatMap(PeripheralIdentifier.init)
    }

    /// `value` as hex, or `text` as UTF-8 (the schema allows exactly one).
    static func bytes(_ call: MethodCall) -> [UInt8] {
        call.arguments.string("text").map { Array($0.utf8) } ?? call.arguments.bytes("value") ?? []
    }

    static func hex(_ bytes: [UInt8]) -> String { Hex.encode(bytes) }

    static let propertyNames: [(CharacteristicProperties, String)] = [
        (.broadcast, "broadcast"), (.read, "read"), (.writeWithoutResponse, "writeWithoutResponse"),
        (.write, "write"), (.notify, "notify"), (.indicate, "indicate"),
        (.authenticatedSignedWrites, "authenticatedSignedWrites"), (.extendedProperties, "extendedProperties"),
    ]

    static func properties(_ properties: CharacteristicProperties) -> JSON {
        .array(propertyNames.filter { properties.contains($0.0) }.map { .string($0.1) })
    }

    /// A BLE failure as a JSON-RPC error: -32020 with the BLE code and BlueZ error.
    static func rpc(_ error: any Error) -> RPCError {
        if let error = error as? RPCError { return error }
        guard let error = error as? BLEError else { return RPCError(.internalError, "\(error)") }
        var data: JSONObject = ["code": .string("\(error.code)")]
        if let bluez = error.bluezError { data["bluezError"] = .string("\(bluez)") }
        return RPCError(.bleFailed, "\(error)", data: .object(data))
    }

    static func notRunning(_ role: String) -> RPCError {
        RPCError(.roleNotRunning, "the \(role) role is not running", data: ["role": .string(role)])
    }
}
