/// One complete D-Bus type, parsed: the shape of a value.
///
/// `a{sv}` is `.dictionary(key: .string, value: .variant)`; `a(ii)` is `.array(.structure([.int32, .int32]))`.
/// Dictionaries are modelled as a type of their own (an array of dict entries) because dict entries cannot appear
/// anywhere else. Types built here are checked against the D-Bus limits when they are used in a message.
public indirect enum DBusType: Sendable, Hashable, CustomStringConvertible {
    /// `y`, an unsigned 8-bit integer.
    case byte
    /// `b`, a boolean.
    case boolean
    /// `n`, a signed 16-bit integer.
    case int16
    /// `q`, an unsigned 16-bit integer.
    case uint16
    /// `i`, a signed 32-bit integer.
    case int32
    /// `u`, an unsigned 32-bit integer.
    case uint32
    /// `x`, a signed 64-bit integer.
    case int64
    /// `t`, an unsigned 64-bit integer.
    case uint64
    /// `d`, an IEEE 754 double.
    case double
    /// `s`, a UTF-8 string.
    case string
    /// `o`, an object path.
    case objectPath
    /// `g`, a type signature.
    case signature
    /// `h`, a Unix file descriptor.
    case unixFD
    /// `v`, a variant: a value carrying its own type.
    case variant
    /// `a` followed by the element type.
    case array(DBusType)
    /// `a{kv}`: an array of dict entries with a basic key type and any value type.
    case dictionary(key: DBusType, value: DBusType)
    /// `(...)`: a structure of one or more fields.
    case structure([DBusType])

    /// Parses one complete type such as `"a{sv}"`.
    public init(_ signature: String) throws(DBusMarshalError) {
        let types = try DBusSignature(signature).types
        guard types.count == 1 else {
            throw .invalidSignature(signature, reason: "expected exactly one complete type, found \(types.count)")
        }
        self = types[0]
    }

    /// The signature text of this type.
    public var signature: String {
        var text = ""
        appendSignature(to: &text)
        return text
    }

    /// The signature text of this type.
    public var description: String { signature }

    /// Whether this is a basic type (usable as a dictionary key).
    public var isBasic: Bool {
        switch self {
        case .variant, .array, .dictionary, .structure: false
        default: true
        }
    }

    func appendSignature(to text: inout String) {
        switch self {
        case .byte: text.append("y")
        case .boolean: text.append("b")
        case .int16: text.append("n")
        case .uint16: text.append("q")
        case .int32: text.append("i")
        case .uint32: text.append("u")
        case .int64: text.append("x")
        case .uint64: text.append("t")
        case .double: text.append("d")
        case .string: text.append("s")
        case .objectPath: text.append("o")
        case .signature: text.append("g")
        case .unixFD: text.append("h")
        case .variant: text.append("v")
        case .array(let element):
            text.append("a")
            element.appendSignature(to: &text)
        case .dictionary(let key, let value):
            text.append("a{")
            key.appendSignature(to: &text)
            value.appendSignature(to: &text)
            text.append("}")
        case .structure(let fields):
            text.append("(")
            for field in fields { field.appendSignature(to: &text) }
            text.append(")")
        }
    }
}
