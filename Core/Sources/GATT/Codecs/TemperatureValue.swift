/// The Temperature characteristic (0x2A6E, GATT Specification Supplement
/// 3.204): a `sint16` in steps of 0.01 degrees Celsius, from -273.15 to
/// 327.67 °C; `0x8000` means the value is not known.
///
/// ```
/// 0a 09  ->  23.14 °C (2314)      00 80  ->  unknown
/// ```
public struct TemperatureValue: FixedLengthValueCodec, CustomStringConvertible {
    /// 0x2A6E.
    public static let uuid = BluetoothUUID.temperature
    /// 2 bytes.
    public static let byteCount = 2
    /// The raw value meaning "not known".
    public static let unknownRaw: Int16 = -0x8000
    /// The allowed raw values: -273.15 °C to 327.67 °C.
    public static let allowedRaw: ClosedRange<Int16> = -27315...32767

    /// The value on the wire, in 0.01 °C steps (``unknownRaw`` when not known).
    public let raw: Int16

    /// A value of `raw` hundredths of a degree.
    ///
    /// - Throws: ``CharacteristicValueError/outOfRange(value:raw:allowed:)``
    ///   unless `raw` is in ``allowedRaw`` or is ``unknownRaw``.
    public init(raw: Int16) throws(CharacteristicValueError) {
        guard raw == Self.unknownRaw || Self.allowedRaw.contains(raw) else {
            throw .outOfRange(value: Self.label, raw: "\(raw)", allowed: "-27315...32767 (or -32768, unknown)")
        }
        self.raw = raw
    }

    /// `celsius` rounded to the nearest 0.01 °C.
    ///
    /// - Throws: ``CharacteristicValueError/outOfRange(value:raw:allowed:)``
    ///   for a value outside -273.15...327.67 or not finite.
    public init(celsius: Double) throws(CharacteristicValueError) {
        guard let value = steps(celsius, resolution: 0.01, in: -27315...32767) else {
            throw .outOfRange(value: Self.label, raw: "\(celsius) °C", allowed: "-273.15...327.67 °C")
        }
        self.raw = Int16(value)
    }

    /// The value "not known" (0x8000).
    public static let unknown = TemperatureValue(uncheckedRaw: unknownRaw)

    private init(uncheckedRaw: Int16) { raw = uncheckedRaw }

    /// Decodes two little-endian bytes.
    public init(bytes: [UInt8]) throws(CharacteristicValueError) {
        try Self.checkLength(bytes)
        try self.init(raw: Int16(littleEndianBytes: bytes, at: 0))
    }

    /// Two bytes, little-endian.
    public var bytes: [UInt8] { raw.littleEndianBytes }

    /// Degrees Celsius, or nil when not known.
    public var celsius: Double? { raw == Self.unknownRaw ? nil : Double(raw) / 100 }

    /// `23.14 °C` or `unknown`.
    public var description: String { celsius.map { "\(fixed2($0)) °C" } ?? "unknown" }
}

/// The Humidity characteristic (0x2A6F, GATT Specification Supplement
/// 3.124): a `uint16` in steps of 0.01 % relative humidity, from 0 to 100 %;
/// `0xFFFF` means the value is not known.
///
/// ```
/// 39 12  ->  46.65 % (4665)       ff ff  ->  unknown
/// ```
public struct HumidityValue: FixedLengthValueCodec, CustomStringConvertible {
    /// 0x2A6F.
    public static let uuid = BluetoothUUID.humidity
    /// 2 bytes.
    public static let byteCount = 2
    /// The raw value meaning "not known".
    public static let unknownRaw: UInt16 = 0xFFFF
    /// The allowed raw values: 0 % to 100 %.
    public static let allowedRaw: ClosedRange<UInt16> = 0...10_000

    /// The value on the wire, in 0.01 % steps (``unknownRaw`` when not known).
    public let raw: UInt16

    /// A value of `raw` hundredths of a percent.
    ///
    /// - Throws: ``CharacteristicValueError/outOfRange(value:raw:allowed:)``
    ///   unless `raw` is in ``allowedRaw`` or is ``unknownRaw``.
    public init(raw: UInt16) throws(CharacteristicValueError) {
        guard raw == Self.unknownRaw || Self.allowedRaw.contains(raw) else {
            throw .outOfRange(value: Self.label, raw: "\(raw)", allowed: "0...10000 (or 65535, unknown)")
        }
        self.raw = raw
    }

    /// `percent` rounded to the nearest 0.01 %.
    ///
    /// - Throws: ``CharacteristicValueError/outOfRange(value:raw:allowed:)``
    ///   for a value outside 0...100 or not finite.
    public init(percent: Double) throws(CharacteristicValueError) {
        guard let value = steps(percent, resolution: 0.01, in: 0...10_000) else {
            throw .outOfRange(value: Self.label, raw: "\(percent) %", allowed: "0...100 %")
        }
        self.raw = UInt16(value)
    }

    /// The value "not known" (0xFFFF).
    public static let unknown = HumidityValue(uncheckedRaw: unknownRaw)

    private init(uncheckedRaw: UInt16) { raw = uncheckedRaw }

    /// Decodes two little-endian bytes.
    public init(bytes: [UInt8]) throws(CharacteristicValueError) {
        try Self.checkLength(bytes)
        try self.init(raw: UInt16(littleEndianBytes: bytes, at: 0))
    }

    /// Two bytes, little-endian.
    public var bytes: [UInt8] { raw.littleEndianBytes }

    /// Percent relative humidity, or nil when not known.
    public var percent: Double? { raw == Self.unknownRaw ? nil : Double(raw) / 100 }

    /// `46.65 %` or `unknown`.
    public var description: String { percent.map { "\(fixed2($0)) %" } ?? "unknown" }
}

/// `value` with exactly two decimals (`-0.50`, `23.14`), without Foundation.
func fixed2(_ value: Double) -> String {
    let hundredths = Int64((value * 100).rounded())
    let sign = hundredths < 0 ? "-" : ""
    let magnitude = hundredths.magnitude
    let fraction = magnitude % 100
    return "\(sign)\(magnitude / 100).\(fraction < 10 ? "0" : "")\(fraction)"
}
