extension JSON {
    /// Whether the value is `null`.
    public var isNull: Bool { self == .null }

    /// The Boolean, if the value is `true` or `false`.
    public var boolValue: Bool? {
        if case .bool(let value) = self { value } else { nil }
    }

    /// The integer, if the value is an integer (`2`, not `2.0`).
    public var intValue: Int64? {
        if case .int(let value) = self { value } else { nil }
    }

    /// The number as a `Double`, if the value is a double or an integer.
    /// Integers beyond ±2^53 are rounded to the nearest `Double`.
    public var doubleValue: Double? {
        switch self {
        case .double(let value): value
        case .int(let value): Double(value)
        default: nil
        }
    }

    /// The string, if the value is a string.
    public var stringValue: String? {
        if case .string(let value) = self { value } else { nil }
    }

    /// The elements, if the value is an array.
    public var arrayValue: [JSON]? {
        if case .array(let value) = self { value } else { nil }
    }

    /// The members, if the value is an object.
    public var objectValue: JSONObject? {
        if case .object(let value) = self { value } else { nil }
    }

    /// The member named `key`, or `nil` if the value is not an object or has no such member.
    public subscript(key: String) -> JSON? {
        objectValue?[key]
    }

    /// The element at `index`, or `nil` if the value is not an array or `index` is out of range.
    public subscript(index: Int) -> JSON? {
        guard case .array(let elements) = self, elements.indices.contains(index) else { return nil }
        return elements[index]
    }
}
