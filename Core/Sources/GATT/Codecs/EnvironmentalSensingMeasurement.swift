/// The Environmental Sensing Measurement descriptor (0x290C, Environmental
/// Sensing Service 1.0, 3.1.2.1): how an ESS characteristic's value is
/// sampled. 11 bytes, little-endian:
///
/// | offset | size | field                    |
/// |--------|------|--------------------------|
/// | 0      | 2    | flags (all bits reserved)|
/// | 2      | 1    | sampling function        |
/// | 3      | 3    | measurement period, s    |
/// | 6      | 3    | internal update interval, s |
/// | 9      | 1    | application              |
/// | 10     | 1    | measurement uncertainty  |
///
/// ```
/// 00 00 02 2c 01 00 05 00 00 01 04
///   -> arithmetic mean over 300 s, updated every 5 s, air, uncertainty 4 (2 %)
/// ```
public struct EnvironmentalSensingMeasurement: FixedLengthValueCodec {
    /// 0x290C.
    public static let uuid = BluetoothUUID.environmentalSensingMeasurement
    /// 11 bytes.
    public static let byteCount = 11
    /// The largest value a 24-bit field holds (seconds).
    public static let maximumSeconds: UInt32 = 0xFF_FFFF

    /// Flags; the spec defines no bits yet (all reserved for future use) and
    /// they round-trip unchanged.
    public var flags: UInt16
    /// How the value is derived from samples.
    public var samplingFunction: SamplingFunction
    /// The period the value covers, in seconds; 0 when not in use.
    public private(set) var measurementPeriod: UInt32
    /// How often the value is updated, in seconds; 0 when not in use.
    public private(set) var updateInterval: UInt32
    /// What is measured (air, water, soil...).
    public var application: Application
    /// Measurement uncertainty in steps of 0.5 %.
    public var uncertainty: UInt8

    /// A descriptor with the given fields.
    ///
    /// - Throws: ``CharacteristicValueError/outOfRange(value:raw:allowed:)``
    ///   when a period or an interval does not fit in 24 bits.
    public init(
        flags: UInt16 = 0, samplingFunction: SamplingFunction, measurementPeriod: UInt32, updateInterval: UInt32,
        application: Application, uncertainty: UInt8
    ) throws(CharacteristicValueError) {
        for (name, seconds) in [("measurement period", measurementPeriod), ("update interval", updateInterval)]
        where seconds > Self.maximumSeconds {
            throw .outOfRange(value: "\(Self.label) \(name)", raw: "\(seconds) s", allowed: "0...16777215 s")
        }
        self.flags = flags
        self.samplingFunction = samplingFunction
        self.measurementPeriod = measurementPeriod
        self.updateInterval = updateInterval
        self.application = application
        self.uncertainty = uncertainty
    }

    /// Decodes 11 bytes. Every byte pattern of the right length is a value.
    public init(bytes: [UInt8]) throws(CharacteristicValueError) {
        try Self.checkLength(bytes)
        flags = UInt16(littleEndianBytes: bytes, at: 0)
        samplingFunction = SamplingFunction(rawValue: bytes[2])
        measurementPeriod = UInt32(bytes[3]) | UInt32(bytes[4]) << 8 | UInt32(bytes[5]) << 16
        updateInterval = UInt32(bytes[6]) | UInt32(bytes[7]) << 8 | UInt32(bytes[8]) << 16
        application = Application(rawValue: bytes[9])
        uncertainty = bytes[10]
    }

    /// Sets the measurement period, in seconds.
    ///
    /// - Throws: ``CharacteristicValueError/outOfRange(value:raw:allowed:)``
    ///   above ``maximumSeconds``.
    public mutating func setMeasurementPeriod(_ seconds: UInt32) throws(CharacteristicValueError) {
        self = try Self(
            flags: flags, samplingFunction: samplingFunction, measurementPeriod: seconds,
            updateInterval: updateInterval, application: application, uncertainty: uncertainty)
    }

    /// Sets the update interval, in seconds.
    ///
    /// - Throws: ``CharacteristicValueError/outOfRange(value:raw:allowed:)``
    ///   above ``maximumSeconds``.
    public mutating func setUpdateInterval(_ seconds: UInt32) throws(CharacteristicValueError) {
        self = try Self(
            flags: flags, samplingFunction: samplingFunction, measurementPeriod: measurementPeriod,
            updateInterval: seconds, application: application, uncertainty: uncertainty)
    }

    /// The 11 bytes.
    public var bytes: [UInt8] {
        flags.littleEndianBytes + [samplingFunction.rawValue] + Array(measurementPeriod.littleEndianBytes.prefix(3))
            + Array(updateInterval.littleEndianBytes.prefix(3)) + [application.rawValue, uncertainty]
    }

    /// The sampling function (open: unknown codes round-trip).
    public struct SamplingFunction: RawRepresentable, Hashable, Sendable {
        /// The code on the wire.
        public let rawValue: UInt8
        /// The function with code `rawValue`.
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// 0x00 Unspecified.
        public static let unspecified = SamplingFunction(rawValue: 0x00)
        /// 0x01 Instantaneous.
        public static let instantaneous = SamplingFunction(rawValue: 0x01)
        /// 0x02 Arithmetic Mean.
        public static let arithmeticMean = SamplingFunction(rawValue: 0x02)
        /// 0x03 RMS.
        public static let rms = SamplingFunction(rawValue: 0x03)
        /// 0x04 Maximum.
        public static let maximum = SamplingFunction(rawValue: 0x04)
        /// 0x05 Minimum.
        public static let minimum = SamplingFunction(rawValue: 0x05)
        /// 0x06 Accumulated.
        public static let accumulated = SamplingFunction(rawValue: 0x06)
        /// 0x07 Count.
        public static let count = SamplingFunction(rawValue: 0x07)
    }

    /// The application (open: unknown codes round-trip). A selection of the
    /// spec's table; any other code is `Application(rawValue:)`.
    public struct Application: RawRepresentable, Hashable, Sendable {
        /// The code on the wire.
        public let rawValue: UInt8
        /// The application with code `rawValue`.
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// 0x00 Unspecified.
        public static let unspecified = Application(rawValue: 0x00)
        /// 0x01 Air.
        public static let air = Application(rawValue: 0x01)
        /// 0x02 Water.
        public static let water = Application(rawValue: 0x02)
        /// 0x03 Barometric.
        public static let barometric = Application(rawValue: 0x03)
        /// 0x04 Soil.
        public static let soil = Application(rawValue: 0x04)
    }
}
