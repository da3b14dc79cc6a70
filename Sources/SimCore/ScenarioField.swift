import GATT
import JSON

/// A JSON value with its place in the scenario file, so every error can say where it is.
struct ScenarioField {
    let value: JSON
    let path: String

    func error(_ message: String) -> ScenarioError { ScenarioError(path: path, message: message) }

    func child(_ key: String) -> String { path.isEmpty ? key : path + "." + key }

    /// The members of an object, refusing keys not in `allowed`.
    func object(allowing allowed: Set<String>) throws(ScenarioError) -> [String: ScenarioField] {
        guard case .object(let object) = value else { throw error("expected an object") }
        var members: [String: ScenarioField] = [:]
        for (key, member) in object {
            guard allowed.contains(key) else {
                throw ScenarioError(
                    path: child(key),
                    message: "unknown key (expected one of \(allowed.sorted().joined(separator: ", ")))")
            }
            members[key] = ScenarioField(value: member, path: child(key))
        }
        return members
    }

    func array() throws(ScenarioError) -> [ScenarioField] {
        guard case .array(let items) = value else { throw error("expected an array") }
        return items.enumerated().map { ScenarioField(value: $1, path: "\(path)[\($0)]") }
    }

    func string() throws(ScenarioError) -> String {
        guard case .string(let text) = value else { throw error("expected a string") }
        return text
    }

    func bool() throws(ScenarioError) -> Bool {
        guard case .bool(let flag) = value else { throw error("expected true or false") }
        return flag
    }

    func number() throws(ScenarioError) -> Double {
        switch value {
        case .int(let number): return Double(number)
        case .double(let number) where number.isFinite: return number
        default: throw error("expected a number")
        }
    }

    func number(in range: ClosedRange<Double>) throws(ScenarioError) -> Double {
        let number = try number()
        guard range.contains(number) else {
            throw error("expected a number in \(range.lowerBound)...\(range.upperBound)")
        }
        return number
    }

    func integer(in range: ClosedRange<Int64>) throws(ScenarioError) -> Int64 {
        guard case .int(let number) = value else { throw error("expected an integer") }
        guard range.contains(number) else {
            throw error("expected an integer in \(range.lowerBound)...\(range.upperBound)")
        }
        return number
    }

    /// An integer written as a number or as a "0x..." string (company identifiers).
    func integerOrHex(in range: ClosedRange<Int64>) throws(ScenarioError) -> Int64 {
        if case .string(let text) = value {
            let digits = text.hasPrefix("0x") || text.hasPrefix("0X") ? String(text.dropFirst(2)) : ""
            guard let number = Int64(digits, radix: 16), range.contains(number) else {
                throw error("expected an integer in \(range.lowerBound)...\(range.upperBound) or a \"0x...\" string")
            }
            return number
        }
        return try integer(in: range)
    }

    func address() throws(ScenarioError) -> DeviceAddress {
        guard let address = DeviceAddress(try string()) else {
            throw error("expected an address like \"AA:BB:CC:DD:EE:FF\"")
        }
        return address
    }

    func addressType() throws(ScenarioError) -> AddressType {
        guard let type = AddressType(rawValue: try string()) else { throw error("expected \"public\" or \"random\"") }
        return type
    }

    func uuid() throws(ScenarioError) -> BluetoothUUID {
        guard let uuid = BluetoothUUID(try string()) else {
            throw error("expected a 16-, 32- or 128-bit UUID like \"180D\" or \"6e400001-b5a3-f393-e0a9-e50e24dcca9e\"")
        }
        return uuid
    }

    func hexBytes() throws(ScenarioError) -> [UInt8] {
        let digits = Array(try string())
        guard digits.count % 2 == 0 else { throw error("expected hex digit pairs like \"0102ff\"") }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(digits[index...index + 1]), radix: 16) else {
                throw error("expected hex digit pairs like \"0102ff\"")
            }
            bytes.append(byte)
        }
        return bytes
    }

    func position() throws(ScenarioError) -> Position {
        let items = try array()
        guard items.count == 2 else { throw error("expected [x, y] in metres") }
        return Position(x: try items[0].number(), y: try items[1].number())
    }
}
