import JSON
import RoleKit

/// Reads one JSON object of a plugin's config, naming every problem by its
/// dotted field path (`sensors[1].source.path`). Unknown keys are errors, so a
/// typo never silently falls back to a default. Shared by this repository's
/// plugins (each links its own copy: it is not part of the core).
public struct PluginConfigReader {
    /// The object read.
    public let object: JSONObject
    /// Its path in the config (empty at the root).
    public let path: String

    /// A reader over `json`, which must be an object.
    public init(_ json: JSON, path: String) throws(PluginConfigError) {
        guard let object = json.objectValue else { throw PluginConfigError(path: path, "expected an object") }
        self.object = object
        self.path = path
    }

    /// `path.key`, or `key` at the root.
    public func field(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    /// Throws for the first key not in `known`.
    public func allowOnly(_ known: Set<String>) throws(PluginConfigError) {
        for key in object.keys where !known.contains(key) {
            throw PluginConfigError(path: field(key), "unknown field")
        }
    }

    /// Throws unless `key` is present.
    public func require(_ key: String) throws(PluginConfigError) -> JSON {
        guard let value = object[key] else { throw PluginConfigError(path: field(key), "is required") }
        return value
    }

    /// A string, or nil when absent; empty strings are refused.
    public func string(_ key: String, maxLength: Int = 256) throws(PluginConfigError) -> String? {
        guard let value = object[key] else { return nil }
        guard let text = value.stringValue, !text.isEmpty, text.utf8.count <= maxLength else {
            throw PluginConfigError(path: field(key), "expected a non-empty string of at most \(maxLength) bytes")
        }
        return text
    }

    /// A finite number within `range`, or nil when absent.
    public func number(_ key: String, in range: ClosedRange<Double>) throws(PluginConfigError) -> Double? {
        guard let value = object[key] else { return nil }
        guard let number = value.doubleValue, number.isFinite, range.contains(number) else {
            throw PluginConfigError(
                path: field(key), "expected a number from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }

    /// An integer within `range`, or nil when absent.
    public func integer(_ key: String, in range: ClosedRange<Int64>) throws(PluginConfigError) -> Int64? {
        guard let value = object[key] else { return nil }
        guard let number = value.intValue, range.contains(number) else {
            throw PluginConfigError(
                path: field(key), "expected an integer from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }

    /// A Boolean, or nil when absent.
    public func bool(_ key: String) throws(PluginConfigError) -> Bool? {
        guard let value = object[key] else { return nil }
        guard let flag = value.boolValue else { throw PluginConfigError(path: field(key), "expected true or false") }
        return flag
    }

    /// A reader for the object at `key`, or nil when absent.
    public func child(_ key: String) throws(PluginConfigError) -> PluginConfigReader? {
        guard let value = object[key] else { return nil }
        return try PluginConfigReader(value, path: field(key))
    }

    /// An array of non-empty strings of at most `maxLength` bytes; empty when absent.
    public func strings(_ key: String, maxLength: Int = 256) throws(PluginConfigError) -> [String] {
        guard let value = object[key] else { return [] }
        guard let items = value.arrayValue else {
            throw PluginConfigError(path: field(key), "expected an array of strings")
        }
        return try items.enumerated().map { (index, item) throws(PluginConfigError) -> String in
            guard let text = item.stringValue, !text.isEmpty, text.utf8.count <= maxLength else {
                throw PluginConfigError(path: "\(field(key))[\(index)]", "expected a non-empty string")
            }
            return text
        }
    }
}
