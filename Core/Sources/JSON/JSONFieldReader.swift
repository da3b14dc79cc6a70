/// Reads one JSON object of a document field by field, naming every problem
/// by its path and collecting them all in a ``JSONFieldReport`` instead of
/// stopping at the first. A field that is absent or wrong reads as `nil`, so
/// the caller falls back to a default and reads on; once the whole document
/// is read, ``JSONFieldReport/check()`` throws every problem.
///
/// ```swift
/// let report = JSONFieldReport()
/// guard let root = JSONFieldReader(json, report: report) else { try report.check(); ... }
/// root.allowOnly(["heartbeatSeconds"])
/// let seconds = root.integer("heartbeatSeconds", in: 0...86_400) ?? 30
/// try report.check()
/// ```
public struct JSONFieldReader {
    /// The object's path in the document (empty at the root).
    public let path: String
    /// The object read.
    public let object: JSONObject
    /// Where problems go.
    public let report: JSONFieldReport

    /// A reader over `json` at `path`; `nil`, with a problem, when `json` is
    /// not an object.
    public init?(_ json: JSON, path: String = "", report: JSONFieldReport) {
        guard let object = json.objectValue else {
            report.add(path: path, "expected an object, found \(JSONFieldError.describe(json))")
            return nil
        }
        self.path = path
        self.object = object
        self.report = report
    }

    /// The full path of `key` under this object.
    public func path(of key: String) -> String { JSONFieldError.path(path, key: key) }

    /// Records `message` at `key` (the object itself when `nil`).
    public func issue(_ key: String?, _ message: String) {
        report.add(path: key.map(path(of:)) ?? path, message)
    }

    /// Records "unknown field" for every key not in `known`, in document order.
    public func allowOnly(_ known: Set<String>) {
        for key in object.keys where !known.contains(key) { issue(key, "unknown field") }
    }

    /// The value of `key`; when absent, `nil` (a problem if `required`).
    public func value(_ key: String, required: Bool = false) -> JSON? {
        guard let value = object[key] else {
            if required { issue(key, "missing required field") }
            return nil
        }
        return value
    }

    /// A non-empty string of at most `maxBytes` bytes of UTF-8.
    public func string(_ key: String, required: Bool = false, maxBytes: Int = 256) -> String? {
        read(key, required: required, "a non-empty string of at most \(maxBytes) bytes") { value in
            guard let text = value.stringValue, !text.isEmpty, text.utf8.count <= maxBytes else { return nil }
            return text
        }
    }

    /// A finite number within `range` (an integer is a number too).
    public func number(_ key: String, in range: ClosedRange<Double>, required: Bool = false) -> Double? {
        let bounds = "\(JSONFieldError.spell(range.lowerBound)) to \(JSONFieldError.spell(range.upperBound))"
        return read(key, required: required, "a number from \(bounds)") {
            guard let number = $0.doubleValue, number.isFinite, range.contains(number) else { return nil }
            return number
        }
    }

    /// An integer (no fraction or exponent) within `range`.
    public func integer(_ key: String, in range: ClosedRange<Int64>, required: Bool = false) -> Int64? {
        read(key, required: required, "an integer from \(range.lowerBound) to \(range.upperBound)") {
            guard let number = $0.intValue, range.contains(number) else { return nil }
            return number
        }
    }

    /// `true` or `false`.
    public func bool(_ key: String, required: Bool = false) -> Bool? {
        read(key, required: required, "true or false") { $0.boolValue }
    }

    /// One of the raw values of `T`.
    public func choice<T: RawRepresentable & CaseIterable>(_ key: String, required: Bool = false) -> T?
    where T.RawValue == String {
        let names = T.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
        return read(key, required: required, "one of \(names)") { $0.stringValue.flatMap(T.init(rawValue:)) }
    }

    /// An array with a count in `count`.
    public func array(_ key: String, required: Bool = false, count: ClosedRange<Int> = 0...Int.max) -> [JSON]? {
        guard let array = read(key, required: required, "an array", { $0.arrayValue }) else { return nil }
        guard count.contains(array.count) else {
            let bounds =
                count.upperBound == Int.max
                ? "at least \(count.lowerBound)" : "\(count.lowerBound) to \(count.upperBound)"
            issue(key, "expected \(bounds) elements, found \(array.count)")
            return nil
        }
        return array
    }

    /// The reader of the object at `key`.
    public func object(_ key: String, required: Bool = false) -> JSONFieldReader? {
        guard let value = value(key, required: required) else { return nil }
        return JSONFieldReader(value, path: path(of: key), report: report)
    }

    /// Reads `key` with `convert`; a value it refuses is a problem saying
    /// what was `expected` and what was found.
    public func read<T>(
        _ key: String, required: Bool = false, _ expected: String, _ convert: (JSON) -> T?
    ) -> T? {
        guard let value = value(key, required: required) else { return nil }
        guard let converted = convert(value) else {
            issue(key, "expected \(expected), found \(JSONFieldError.describe(value))")
            return nil
        }
        return converted
    }
}
