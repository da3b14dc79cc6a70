/// Why a standard characteristic or descriptor value could not be decoded or
/// encoded. Thrown by the codecs in this folder; each names the value it was
/// reading (`Temperature (0x2A6E)`) so a log line says what was wrong.
public enum CharacteristicValueError: Error, Hashable, Sendable, CustomStringConvertible {
    /// `value` arrived with `actual` bytes; its format has exactly `expected`.
    case wrongLength(value: String, expected: Int, actual: Int)
    /// `value` holds `raw` (as written on the wire, or asked for in physical
    /// units), outside `allowed`.
    case outOfRange(value: String, raw: String, allowed: String)

    /// Says which value, what arrived and what is allowed.
    public var description: String {
        switch self {
        case .wrongLength(let value, let expected, let actual):
            return "\(value) has \(actual) byte\(actual == 1 ? "" : "s"); its format has exactly \(expected)"
        case .outOfRange(let value, let raw, let allowed):
            return "\(value) value \(raw) is outside \(allowed)"
        }
    }
}

/// A value with a fixed-length wire format from the GATT Specification
/// Supplement, encoded and decoded symmetrically:
/// `try T(bytes: value.bytes) == value` for every value a codec can make.
public protocol FixedLengthValueCodec: Hashable, Sendable {
    /// The UUID of the characteristic or descriptor carrying the value.
    static var uuid: BluetoothUUID { get }
    /// How many bytes the value takes on the wire.
    static var byteCount: Int { get }
    /// Decodes the value.
    ///
    /// - Throws: ``CharacteristicValueError/wrongLength(value:expected:actual:)``
    ///   unless `bytes` has exactly ``byteCount`` bytes;
    ///   ``CharacteristicValueError/outOfRange(value:raw:allowed:)`` for a
    ///   value the format does not allow.
    init(bytes: [UInt8]) throws(CharacteristicValueError)
    /// The value on the wire, little-endian.
    var bytes: [UInt8] { get }
}

extension FixedLengthValueCodec {
    /// `Temperature (0x2A6E)`: how errors name the value.
    static var label: String { "\(uuid.name ?? "Value") (0x\(uuid.shortString.uppercased()))" }

    /// Throws unless `bytes` has exactly ``byteCount`` bytes.
    static func checkLength(_ bytes: [UInt8]) throws(CharacteristicValueError) {
        guard bytes.count == byteCount else {
            throw .wrongLength(value: label, expected: byteCount, actual: bytes.count)
        }
    }
}

/// `value` rounded to the nearest whole number of `resolution` steps, or nil
/// when it is not finite or the step count falls outside `range`.
func steps(_ value: Double, resolution: Double, in range: ClosedRange<Int64>) -> Int64? {
    guard value.isFinite else { return nil }
    let scaled = (value / resolution).rounded()
    guard scaled >= Double(range.lowerBound), scaled <= Double(range.upperBound) else { return nil }
    return Int64(scaled)
}
