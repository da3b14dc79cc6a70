import JSON

/// Walks one JSON object of a config, remembering its path, reading typed
/// fields and collecting every problem instead of stopping at the first.
/// Fields never read are reported as unknown by ``finish()``.
struct ConfigReader {
    let path: String
    let object: JSONObject
    private(set) var issues: [ConfigIssue] = []
    private var read: Set<String> = []

    /// A reader over `json` at `path`; `nil` (with an issue) if it is not an object.
    static func object(_ json: JSON, at path: String, issues: inout [ConfigIssue]) -> ConfigReader? {
        guard case .object(let object) = json else {
            issues.append(ConfigIssue(path: path, message: "expected an object, found \(kindName(of: json))"))
            return nil
        }
        return ConfigReader(path: path, object: object)
    }

    private init(path: String, object: JSONObject) {
        self.path = path
        self.object = object
    }

    /// The full path of `key` under this object.
    func path(of key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    mutating func issue(_ key: String?, _ message: String) {
        issues.append(ConfigIssue(path: key.map(path(of:)) ?? path, message: message))
    }

    /// Records `message` at an explicit full path (an array element).
    mutating func issue(at fullPath: String, _ message: String) {
        issues.append(ConfigIssue(path: fullPath, message: message))
    }

    /// The raw value of `key`, marking it read; an issue if required and missing.
    mutating func value(_ key: String, required: Bool) -> JSON? {
        read.insert(key)
        guard let value = object[key] else {
            if required { issue(key, "missing required field") }
            return nil
        }
        return value
    }

    mutating func string(_ key: String, required: Bool = false) -> String? {
        guard let value = value(key, required: required) else { return nil }
        guard let string = value.stringValue else {
            issue(key, "expected a string, found \(kindName(of: value))")
            return nil
        }
        return string
    }

    /// A non-empty string.
    mutating func nonEmptyString(_ key: String, required: Bool = false) -> String? {
        guard let string = string(key, required: required) else { return nil }
        guard !string.isEmpty else {
            issue(key, "must not be empty")
            return nil
        }
        return string
    }

    mutating func int(_ key: String, required: Bool = false) -> Int64? {
        guard let value = value(key, required: required) else { return nil }
        guard let int = value.intValue else {
            issue(key, "expected an integer, found \(kindName(of: value))")
            return nil
        }
        return int
    }

    mutating func bool(_ key: String, required: Bool = false) -> Bool? {
        guard let value = value(key, required: required) else { return nil }
        guard case .bool(let bool) = value else {
            issue(key, "expected true or false, found \(kindName(of: value))")
            return nil
        }
        return bool
    }

    /// One of `choices` (the raw values of `T`).
    mutating func choice<T: RawRepresentable & CaseIterable>(_ key: String, required: Bool = false) -> T?
    where T.RawValue == String {
        guard let string = string(key, required: required) else { return nil }
        guard let choice = T(rawValue: string) else {
            let names = T.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: " or ")
            issue(key, "\"\(string)\" is not one of \(names)")
            return nil
        }
        return choice
    }

    /// A nested object's reader (its issues merge back through ``absorb(_:)``).
    mutating func object(_ key: String, required: Bool = false) -> ConfigReader? {
        guard let value = value(key, required: required) else { return nil }
        return ConfigReader.object(value, at: path(of: key), issues: &issues)
    }

    /// Takes a nested reader's issues, after its own ``finish()``.
    mutating func absorb(_ nested: ConfigReader) { issues += nested.issues }

    /// Reports every field that no one read as unknown, in file order.
    mutating func finish() {
        for key in object.keys where !read.contains(key) {
            issue(key, "unknown field")
        }
    }
}

/// `a string`, `an integer`, ... for error messages. (A free function, not
/// an extension of `JSON`: an extension would define symbols under the core's
/// module prefix in this image, which the one-copy check counts.)
func kindName(of json: JSON) -> String {
    switch json {
    case .null: "null"
    case .bool: "a boolean"
    case .int: "an integer"
    case .double: "a number with a fraction"
    case .string: "a string"
    case .array: "an array"
    case .object: "an object"
    }
}
