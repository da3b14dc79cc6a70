// Literals for building values in code. There is deliberately no
// `ExpressibleByNilLiteral`: `nil` stays `Optional.none` (a missing member),
// and JSON null is spelt `.null`.

extension JSON: ExpressibleByBooleanLiteral {
    /// `true` or `false` as a JSON Boolean.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension JSON: ExpressibleByIntegerLiteral {
    /// An integer literal as `.int`.
    public init(integerLiteral value: Int64) { self = .int(value) }
}

extension JSON: ExpressibleByFloatLiteral {
    /// A floating-point literal as `.double`.
    public init(floatLiteral value: Double) { self = .double(value) }
}

extension JSON: ExpressibleByStringLiteral {
    /// A string literal as `.string`.
    public init(stringLiteral value: String) { self = .string(value) }
}

extension JSON: ExpressibleByArrayLiteral {
    /// An array literal as `.array`.
    public init(arrayLiteral elements: JSON...) { self = .array(elements) }
}

extension JSON: ExpressibleByDictionaryLiteral {
    /// A dictionary literal as `.object`, keeping the literal's order; a
    /// repeated key keeps its first position and its last value.
    public init(dictionaryLiteral elements: (String, JSON)...) { self = .object(JSONObject(elements)) }
}
