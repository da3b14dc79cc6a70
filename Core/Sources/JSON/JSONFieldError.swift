/// One problem in a JSON document (a config, a request's params), named by
/// the path of the field at fault: `sensors[1].source.path`, dotted, with
/// array indices in brackets; empty for the document as a whole.
public struct JSONFieldError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The field's path; empty for the whole document.
    public var path: String
    /// What is wrong, in one sentence.
    public var message: String

    /// A problem at `path`.
    public init(path: String, _ message: String) {
        self.path = path
        self.message = message
    }

    /// `path: message`, or the message alone for the whole document.
    public var description: String { path.isEmpty ? message : "\(path): \(message)" }

    /// How a message names a value it found: `the string "zz"`, `the integer
    /// -500`, `the number 2.5`, `true`, `null`, `an array`, `an object`.
    /// Strings longer than 40 characters are cut short (`"abc…"`).
    public static func describe(_ value: JSON) -> String {
        switch value {
        case .null: "null"
        case .bool(let flag): flag ? "true" : "false"
        case .int(let number): "the integer \(number)"
        case .double(let number): "the number \(number)"
        case .string(let text):
            "the string \(JSON.string(text.count > 40 ? String(text.prefix(40)) + "…" : text).serialized())"
        case .array: "an array"
        case .object: "an object"
        }
    }

    /// A number as a person writes it in a range: `20`, not `20.0`; `0.1`.
    public static func spell(_ number: Double) -> String {
        number.rounded() == number && abs(number) < 1e15 ? String(Int64(number)) : "\(number)"
    }

    /// `path.key`, or `key` at the root.
    public static func path(_ path: String, key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }
}

/// Every problem found in one document, in the order they were found.
public struct JSONFieldErrors: Error, Sendable, Hashable, CustomStringConvertible {
    /// The problems; never empty when thrown.
    public var errors: [JSONFieldError]

    /// The problems `errors`.
    public init(_ errors: [JSONFieldError]) { self.errors = errors }

    /// Each problem's description, joined by "; ".
    public var description: String { errors.map(\.description).joined(separator: "; ") }
}

/// Where a ``JSONFieldReader`` and every reader it makes collect problems, so
/// a document is read to its end and every problem reported, not just the
/// first. One report per document, used by one thread.
public final class JSONFieldReport {
    /// The problems so far, in the order they were found.
    public private(set) var errors: [JSONFieldError] = []

    /// An empty report.
    public init() {}

    /// Adds a problem.
    public func add(_ error: JSONFieldError) { errors.append(error) }

    /// Adds the problem `message` at `path`.
    public func add(path: String, _ message: String) { errors.append(JSONFieldError(path: path, message)) }

    /// Throws every problem collected, if there is one.
    public func check() throws(JSONFieldErrors) {
        guard errors.isEmpty else { throw JSONFieldErrors(errors) }
    }
}
