/// What a sensor measures. The four standard kinds map to SIG characteristics
/// and BTHome objects and have a fixed unit; `generic` sensors are aggregated
/// and summarised but have no standard characteristic.
public enum SensorKind: String, Sendable, Hashable, CaseIterable {
    /// Degrees Celsius; ESS Temperature (0x2A6E), BTHome 0x02.
    case temperature
    /// Percent relative humidity; ESS Humidity (0x2A6F), BTHome 0x03.
    case humidity
    /// Pascals; ESS Pressure (0x2A6D), BTHome 0x04 (sent in 0.01 hPa = 1 Pa).
    case pressure
    /// Percent of full charge; Battery Level (0x2A19), BTHome 0x01.
    case battery
    /// Any other quantity, in the unit its config names.
    case generic

    /// The unit values of this kind are stored in (after scale and offset),
    /// or nil for `generic`, whose config chooses.
    public var canonicalUnit: String? {
        switch self {
        case .temperature: "degC"
        case .humidity: "%"
        case .pressure: "Pa"
        case .battery: "%"
        case .generic: nil
        }
    }

    /// The values a sensor of this kind can physically report, in its unit:
    /// temperature from absolute zero to 327.67 °C (ESS Temperature's
    /// largest), humidity and battery 0-100 %, pressure 0 to 429,496,729 Pa
    /// (ESS Pressure's largest); a generic value must fit a float32, as the
    /// Summary carries it. A reading outside is refused (and counted), so no
    /// NaN or infinity ever reaches a characteristic.
    public var physicalRange: ClosedRange<Double> {
        switch self {
        case .temperature: -273.15...327.67
        case .humidity, .battery: 0...100
        case .pressure: 0...429_496_729
        case .generic: -Double(Float.greatestFiniteMagnitude)...Double(Float.greatestFiniteMagnitude)
        }
    }

    /// The code used in the binary Aggregates summary.
    public var code: UInt8 {
        switch self {
        case .generic: 0
        case .temperature: 1
        case .humidity: 2
        case .pressure: 3
        case .battery: 4
        }
    }

    /// The kind with summary code `code`, or nil.
    public init?(code: UInt8) {
        guard let kind = Self.allCases.first(where: { $0.code == code }) else { return nil }
        self = kind
    }
}
