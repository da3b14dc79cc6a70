extension PropertyValue {
    /// Roughly the bytes the value takes as sent: a string's or path's UTF-8 and its terminator, a byte array's
    /// bytes, 8 for a number or a Boolean, and an array's or dictionary's elements added up. What the mirror's
    /// per-device budget counts (``ObjectTreeMirror/deviceByteBudget``; a property that is a number or a Boolean
    /// is not counted there).
    public var payloadBytes: Int {
        switch self {
        case .bool, .int, .uint, .double: return 8
        case .string(let text), .objectPath(let text): return text.utf8.count + 1
        case .bytes(let bytes): return bytes.count
        case .array(let elements): return elements.reduce(0) { $0 + $1.payloadBytes }
        case .dictionary(let entries): return entries.reduce(0) { $0 + $1.key.payloadBytes + $1.value.payloadBytes }
        }
    }

    /// A number or a Boolean: a value whose size is fixed.
    var isScalar: Bool {
        switch self {
        case .bool, .int, .uint, .double: true
        default: false
        }
    }
}
