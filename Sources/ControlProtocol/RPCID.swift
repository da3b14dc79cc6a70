import JSON

/// A JSON-RPC request id: a string, an integer or null.
public enum RPCID: Sendable, Hashable, CustomStringConvertible {
    /// A numeric id.
    case number(Int64)
    /// A string id.
    case string(String)
    /// `null` (allowed by JSON-RPC, discouraged; also the id of replies to
    /// requests whose id could not be read).
    case null

    /// The id as JSON.
    public var json: JSON {
        switch self {
        case .number(let value): .int(value)
        case .string(let value): .string(value)
        case .null: .null
        }
    }

    /// Reads an id; `nil` for any other JSON (fractions, booleans, objects).
    public init?(json: JSON) {
        switch json {
        case .int(let value): self = .number(value)
        case .string(let value): self = .string(value)
        case .null: self = .null
        default: return nil
        }
    }

    /// The id as it appears on the wire.
    public var description: String { json.serialized() }
}
