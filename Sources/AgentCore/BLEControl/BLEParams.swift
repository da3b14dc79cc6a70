import BLE
import ControlProtocol
import GATT
import JSON
import RoleKit

/// Reading the params of the `central.*` / `peripheral.*` methods and turning
/// BLE values and errors into their JSON shapes (docs/control-api.md).
enum BLEParams {
    static func object(_ call: MethodCall) throws(RPCError) -> JSONObject {
        switch call.params {
        case nil: return JSONObject()
        case .object(let object): return object
        default: throw .invalidParams("\(call.method) takes an object of params")
        }
    }

    static func string(_ object: JSONObject, _ key: String, required: Bool = true) throws(RPCError) -> String? {
        guard let value = object[key] else {
            if required { throw .invalidParams("missing \"\(key)\"") }
            return nil
        }
        guard let text = value.stringValue else { throw .invalidParams("\"\(key)\" must be a string") }
        return text
    }

    static func uuid(_ object: JSONObject, _ key: String, required: Bool = true) throws(RPCError) -> BluetoothUUID? {
        guard let text = try string(object, key, required: required) else { return nil }
        guard let uuid = BluetoothUUID(text) else { throw .invalidParams("\"\(key)\": \"\(text)\" is not a UUID") }
        return uuid
    }

    static func uuids(_ object: JSONObject, _ key: String) throws(RPCError) -> [BluetoothUUID]? {
        guard let value = object[key] else { return nil }
        guard let array = value.arrayValue else { throw .invalidParams("\"\(key)\" must be an array of UUIDs") }
        var result: [BluetoothUUID] = []
        for element in array {
            guard let text = element.stringValue, let uuid = BluetoothUUID(text) else {
                throw .invalidParams("\"\(key)\" must be an array of UUIDs")
            }
            result.append(uuid)
        }
        return result
    }

    static func identifier(_ object: JSONObject) throws(RPCError) -> PeripheralIdentifier {
        let text = try string(object, "id") ?? ""
        guard let id = PeripheralIdentifier(text) else {
            throw .invalidParams("\"id\": \"\(text)\" is not a device id (a UUID from central.devices)")
        }
        return id
    }

    /// `value` as hex (`"0a1b"`), or `text` as UTF-8.
    static func bytes(_ object: JSONObject) throws(RPCError) -> [UInt8] {
        if let text = try string(object, "text", required: false) { return Array(text.utf8) }
        let hex = try string(object, "value") ?? ""
        guard let bytes = parseHex(hex) else { throw .invalidParams("\"value\" must be hex digits in pairs") }
        return bytes
    }

    static func parseHex(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        var index = 0
        while index < digits.count {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0xf)])
        }
        return String(decoding: out, as: UTF8.self)
    }

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
