import BLE
import GATT
import JSON

/// A call's params after its ``ParamSchema`` accepted them: typed reads of
/// named params. Each accessor returns `nil` for a param that is absent (or
/// of another type than asked for, which the schema rules out for declared
/// params).
public struct ParamValues: Sendable {
    /// The params as the request carried them (`nil` when absent).
    public let json: JSON?
    private let object: JSONObject

    /// Params as accepted by a schema.
    public init(_ json: JSON?) {
        self.json = json
        self.object = json?.objectValue ?? JSONObject()
    }

    /// No params.
    public static let empty = ParamValues(nil)

    /// The raw value of `name`.
    public subscript(name: String) -> JSON? { object[name] }

    /// Whether `name` was given.
    public func contains(_ name: String) -> Bool { object[name] != nil }

    /// A Boolean param.
    public func bool(_ name: String) -> Bool? { object[name]?.boolValue }

    /// An integer param.
    public func int(_ name: String) -> Int64? { object[name]?.intValue }

    /// A number param (an integer reads as a number too).
    public func double(_ name: String) -> Double? { object[name]?.doubleValue }

    /// A string param.
    public func string(_ name: String) -> String? { object[name]?.stringValue }

    /// A ``ParamType/uuid`` param.
    public func uuid(_ name: String) -> BluetoothUUID? { string(name).flatMap(BluetoothUUID.init) }

    /// An ``ParamType/array(of:count:)`` of ``ParamType/uuid`` param.
    public func uuids(_ name: String) -> [BluetoothUUID]? {
        object[name]?.arrayValue?.compactMap { $0.stringValue.flatMap(BluetoothUUID.init) }
    }

    /// A ``ParamType/hex(maxBytes:)`` param's bytes.
    public func bytes(_ name: String) -> [UInt8]? { string(name).flatMap(Hex.decode) }
}
