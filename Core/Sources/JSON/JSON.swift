/// A JSON value.
///
/// Parse text with ``init(parsing:options:)`` and write it with
/// ``serialized(_:)``; build values in code with literals:
///
/// ```swift
/// let reply: JSON = ["jsonrpc": "2.0", "id": 7, "result": ["ok": true]]
/// ```
///
/// Integers and floating-point numbers stay apart: `2` parses to `.int(2)` and
/// `2.0` to `.double(2.0)`, and each serialises back the way it came.
/// Equality is structural and order-sensitive for objects (see ``JSONObject``),
/// so two equal values always serialise to the same text.
public enum JSON: Sendable, Hashable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number written without a fraction or exponent, within the range of `Int64`.
    case int(Int64)
    /// A number written with a fraction or exponent. Serialising a non-finite
    /// double (which JSON cannot express) writes `null`.
    case double(Double)
    /// A string: any Unicode text, including U+0000 and control characters.
    case string(String)
    /// An array.
    case array([JSON])
    /// An object whose members keep their order.
    case object(JSONObject)
}
