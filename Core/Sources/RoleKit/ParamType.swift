import BLE
import GATT
import JSON

/// What one param's value must be. Build one with the static members
/// (`.boolean`, `.integer(1...86_400)`, `.uuid`, `.array(of: .uuid)`, ...)
/// or ``custom(_:_:)``; ``ParamSchema`` applies it before the handler runs.
public struct ParamType: Sendable {
    /// What a value must be, as a message says it: "an integer from 1 to 86400".
    public let expected: String
    private let problemsAt: @Sendable (JSON, String) -> [JSONFieldError]

    /// A type whose values `accepts`, described as `expected`.
    public static func custom(_ expected: String, _ accepts: @escaping @Sendable (JSON) -> Bool) -> ParamType {
        ParamType(expected: expected) { value, path in
            accepts(value) ? [] : [mismatch(path, expected, value)]
        }
    }

    /// The problems of `value` at `path` (empty when it is fine).
    func problems(_ value: JSON, _ path: String) -> [JSONFieldError] { problemsAt(value, path) }

    private static func mismatch(_ path: String, _ expected: String, _ value: JSON) -> JSONFieldError {
        JSONFieldError(path: path, "expected \(expected), found \(JSONFieldError.describe(value))")
    }

    /// `true` or `false` (not `0`, not `"false"`).
    public static let boolean = custom("true or false") { $0.boolValue != nil }

    /// An integer (written without fraction or exponent) within `range`.
    public static func integer(_ range: ClosedRange<Int64>) -> ParamType {
        custom("an integer from \(range.lowerBound) to \(range.upperBound)") { value in
            value.intValue.map(range.contains) ?? false
        }
    }

    /// A finite number within `range`; integers are numbers too.
    public static func number(_ range: ClosedRange<Double>) -> ParamType {
        custom("a number from \(JSONFieldError.spell(range.lowerBound)) to \(JSONFieldError.spell(range.upperBound))") {
            value in
            value.doubleValue.map { $0.isFinite && range.contains($0) } ?? false
        }
    }

    /// A string of at most `maxBytes` bytes of UTF-8; empty only if `allowEmpty`.
    public static func string(maxBytes: Int = 1024, allowEmpty: Bool = false) -> ParamType {
        custom("a\(allowEmpty ? "" : " non-empty") string of at most \(maxBytes) bytes") { value in
            value.stringValue.map { ($0.isEmpty ? allowEmpty : true) && $0.utf8.count <= maxBytes } ?? false
        }
    }

    /// One of `names`, exactly.
    public static func oneOf(_ names: [String]) -> ParamType {
        custom("one of \(names.map { "\"\($0)\"" }.joined(separator: ", "))") { value in
            value.stringValue.map(names.contains) ?? false
        }
    }

    /// A Bluetooth UUID: 16-bit (`"2a37"`), 32-bit or 128-bit.
    public static let uuid = custom("a Bluetooth UUID such as \"2a37\" or \"0000180d-0000-1000-8000-00805f9b34fb\"") {
        value in value.stringValue.flatMap(BluetoothUUID.init) != nil
    }

    /// Bytes as hex digits in pairs (`"0a1b"`), at most `maxBytes` of them.
    public static func hex(maxBytes: Int) -> ParamType {
        custom("hex digits in pairs (at most \(maxBytes) bytes)") { value in
            value.stringValue.flatMap(Hex.decode).map { $0.count <= maxBytes } ?? false
        }
    }

    /// An array of `element`s, with a count in `count`; each element's
    /// problems are named by its index (`services[2]`).
    public static func array(of element: ParamType, count: ClosedRange<Int> = 0...1024) -> ParamType {
        let expected = "an array of \(count.lowerBound) to \(count.upperBound) elements, each \(element.expected)"
        return ParamType(expected: expected) { value, path in
            guard let array = value.arrayValue else { return [mismatch(path, expected, value)] }
            guard count.contains(array.count) else {
                return [
                    JSONFieldError(
                        path: path,
                        "expected \(count.lowerBound) to \(count.upperBound) elements, found \(array.count)")
                ]
            }
            return array.enumerated().flatMap { index, item in element.problems(item, "\(path)[\(index)]") }
        }
    }

    /// Any JSON value, unchecked.
    public static let anything = custom("any JSON value") { _ in true }
}
