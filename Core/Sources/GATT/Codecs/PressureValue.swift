/// The Pressure characteristic (0x2A6D, GATT Specification Supplement
/// 3.181): a `uint32` in steps of 0.1 pascal.
///
/// ```
/// 08 76 0f 00  ->  101325.6 Pa (1013256)
/// ```
public struct PressureValue: FixedLengthValueCodec, CustomStringConvertible {
    /// 0x2A6D.
    public static let uuid = BluetoothUUID.pressure
    /// 4 bytes.
    public static let byteCount = 4

    /// The value on the wire, in 0.1 Pa steps.
    public let raw: UInt32

    /// A value of `raw` tenths of a pascal (every `UInt32` is valid).
    public init(raw: UInt32) {
        self.raw = raw
    }

    /// `pascals` rounded to the nearest 0.1 Pa.
    ///
    /// - Throws: ``CharacteristicValueError/outOfRange(value:raw:allowed:)``
    ///   for a negative, too large or non-finite value.
    public init(pascals: Double) throws(CharacteristicValueError) {
        guard let value = steps(pascals, resolution: 0.1, in: 0...Int64(UInt32.max)) else {
            throw .outOfRange(value: Self.label, raw: "\(pascals) Pa", allowed: "0...429496729.5 Pa")
        }
        self.raw = UInt32(value)
    }

    /// Decodes four little-endian bytes.
    public init(bytes: [UInt8]) throws(CharacteristicValueError) {
        try Self.checkLength(bytes)
        self.init(raw: UInt32(littleEndianBytes: bytes, at: 0))
    }

    /// Four bytes, little-endian.
    public var bytes: [UInt8] { raw.littleEndianBytes }

    /// Pascals.
    public var pascals: Double { Double(raw) / 10 }

    /// `101325.6 Pa`.
    public var description: String { "\(raw / 10).\(raw % 10) Pa" }
}

/// The Battery Level characteristic (0x2A19, GATT Specification Supplement
/// 3.27): a `uint8` percentage of full charge, 0 to 100.
///
/// ```
/// 57  ->  87 %
/// ```
public struct BatteryLevelValue: FixedLengthValueCodec, CustomStringConvertible {
    /// 0x2A19.
    public static let uuid = BluetoothUUID.batteryLevel
    /// 1 byte.
    public static let byteCount = 1
    /// The allowed values.
    public static let allowed: ClosedRange<UInt8> = 0...100

    /// Percent of full charge.
    public let percent: UInt8

    /// A level of `percent`.
    ///
    /// - Throws: ``CharacteristicValueError/outOfRange(value:raw:allowed:)``
    ///   above 100.
    public init(percent: UInt8) throws(CharacteristicValueError) {
        guard Self.allowed.contains(percent) else {
            throw .outOfRange(value: Self.label, raw: "\(percent)", allowed: "0...100")
        }
        self.percent = percent
    }

    /// `percent` rounded to a whole percent.
    ///
    /// - Throws: ``CharacteristicValueError/outOfRange(value:raw:allowed:)``
    ///   outside 0...100 or not finite.
    public init(percent: Double) throws(CharacteristicValueError) {
        guard let value = steps(percent, resolution: 1, in: 0...100) else {
            throw .outOfRange(value: Self.label, raw: "\(percent)", allowed: "0...100")
        }
        self.percent = UInt8(value)
    }

    /// Decodes one byte.
    public init(bytes: [UInt8]) throws(CharacteristicValueError) {
        try Self.checkLength(bytes)
        try self.init(percent: bytes[0])
    }

    /// One byte.
    public var bytes: [UInt8] { [percent] }

    /// `87 %`.
    public var description: String { "\(percent) %" }
}
