import GATT

/// The UUIDs of the sensor aggregator's GATT layout
/// (docs/profiles/sensor-aggregator.md). The custom ones were generated once
/// for this project; the characteristics count up from the service's first
/// group.
public enum SensorAggregatorProfile {
    /// The custom Aggregates service, 07140ec0-d234-4118-a438-685945414e79.
    public static let aggregatesService = BluetoothUUID(high: 0x0714_0EC0_D234_4118, low: 0xA438_6859_4541_4E79)
    /// Its Summary characteristic (read, notify), 07140ec1-d234-4118-a438-685945414e79.
    public static let summaryCharacteristic = BluetoothUUID(high: 0x0714_0EC1_D234_4118, low: 0xA438_6859_4541_4E79)
    /// Its Config characteristic (read, write with response), 07140ec2-d234-4118-a438-685945414e79.
    public static let configCharacteristic = BluetoothUUID(high: 0x0714_0EC2_D234_4118, low: 0xA438_6859_4541_4E79)

    /// The ESS characteristic of a standard kind (nil for battery and generic).
    public static func essCharacteristic(for kind: SensorKind) -> BluetoothUUID? {
        switch kind {
        case .temperature: .temperature
        case .humidity: .humidity
        case .pressure: .pressure
        case .battery, .generic: nil
        }
    }

    /// The characteristic value for `value` of `kind`: the SIG format of
    /// Temperature, Humidity, Pressure or Battery Level; nil for `generic`.
    ///
    /// - Throws: ``CharacteristicValueError`` when the value is outside the
    ///   format's range (the caller serves "unknown" or skips the update).
    public static func encode(_ value: Double, kind: SensorKind) throws(CharacteristicValueError) -> [UInt8]? {
        switch kind {
        case .temperature: try TemperatureValue(celsius: value).bytes
        case .humidity: try HumidityValue(percent: value).bytes
        case .pressure: try PressureValue(pascals: value).bytes
        case .battery: try BatteryLevelValue(percent: value).bytes
        case .generic: nil
        }
    }

    /// The ES Measurement descriptor (0x290C) of an ESS characteristic that
    /// serves the last sample of a sensor polled every `pollSeconds` (nil for
    /// ingest sources: updated when lines arrive).
    public static func measurementDescriptor(
        kind: SensorKind, pollSeconds: Double?
    ) -> EnvironmentalSensingMeasurement? {
        let interval = pollSeconds.map { UInt32(clamping: Int64($0.rounded(.up))) } ?? 0
        return try? EnvironmentalSensingMeasurement(
            samplingFunction: .instantaneous, measurementPeriod: 0,
            updateInterval: min(interval, EnvironmentalSensingMeasurement.maximumSeconds),
            application: kind == .pressure ? .barometric : .air, uncertainty: 0)
    }
}

/// Tracks which sensors are beyond their thresholds and reports changes, so
/// a crossing notifies once rather than at every reading.
public struct ThresholdMonitor: Sendable, Hashable {
    private var state: [String: ThresholdBreach] = [:]

    /// No sensor in breach.
    public init() {}

    /// The breach `sensor` is in.
    public func breach(of sensor: String) -> ThresholdBreach? { state[sensor] }

    /// Records `value` of `sensor` against `thresholds`; returns the new
    /// state when it changed (`.some(nil)`: back within limits), else nil.
    public mutating func observe(
        sensor: String, value: Double, thresholds: Thresholds
    ) -> ThresholdBreach?? {
        let now = thresholds.breach(of: value)
        guard now != state[sensor] else { return nil }
        state[sensor] = now
        return .some(now)
    }
}
