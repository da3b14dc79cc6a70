import GATT

/// The latest values the advertisement carries (nil: not available).
public struct AdvertisedValues: Sendable, Hashable {
    /// °C.
    public var temperature: Double?
    /// %.
    public var humidity: Double?
    /// Pa.
    public var pressure: Double?
    /// %.
    public var battery: Double?

    /// Values; absent ones are nil.
    public init(temperature: Double? = nil, humidity: Double? = nil, pressure: Double? = nil, battery: Double? = nil) {
        self.temperature = temperature
        self.humidity = humidity
        self.pressure = pressure
        self.battery = battery
    }
}

/// A BTHome object the advertisement may carry, in the order they are
/// dropped when the legacy advertisement is full.
public enum BTHomeField: String, Sendable, Hashable, CaseIterable {
    /// Dropped first: 4 bytes, and the slowest-changing reading.
    case pressure
    /// Dropped second: 2 bytes; most gateways are mains-powered.
    case battery
    /// Dropped third.
    case humidity
    /// Dropped last: the reading Home Assistant users look for first.
    case temperature
}

/// The advertisement the sensor aggregator registers, and what had to give
/// way for it to fit.
public struct SensorAdvertisementPlan: Sendable, Hashable {
    /// The advertising data. Flags are included because the kernel adds them
    /// to every connectable advertisement and they take 3 of the 31 bytes;
    /// BlueZ's LEAdvertisement1 takes the other fields.
    public var data: AdvertisingData
    /// The encoded advertisement (at most 31 bytes).
    public var bytes: [UInt8]
    /// BTHome objects left out for room, in drop order.
    public var dropped: [BTHomeField]
    /// BTHome objects left out because the value does not fit its format.
    public var unrepresentable: [BTHomeField]
    /// Whether the name was cut (sent as a Shortened Local Name).
    public var nameShortened: Bool
}

/// Builds the legacy advertisement: Flags, the ESS UUID (0x181A) in the
/// complete 16-bit list, BTHome v2 service data (0xFCD2) and the local name,
/// within 31 bytes.
///
/// Drop priority when it does not fit (docs/profiles/sensor-aggregator.md):
/// 1. shorten the name, but not below `minimumNameLength` characters;
/// 2. drop BTHome objects in ``BTHomeField`` order (pressure, battery,
///    humidity, temperature), retrying step 1 after each;
/// 3. with no object left, drop the BTHome service data;
/// 4. shorten the name to whatever fits (flags and the ESS UUID take 7
///    bytes, so at least 22 bytes of name always do).
public enum SensorAdvertisementBuilder {
    /// The plan for `config` and `values`.
    public static func build(config: AdvertisingConfig, values: AdvertisedValues) -> SensorAdvertisementPlan {
        var objects: [BTHomeField: BTHomeObject] = [:]
        var unrepresentable: [BTHomeField] = []
        func add(_ field: BTHomeField, _ value: Double?, _ make: (Double) -> BTHomeObject?) {
            guard config.bthome, let value else { return }
            if let object = make(value) { objects[field] = object } else { unrepresentable.append(field) }
        }
        add(.temperature, values.temperature, BTHomeObject.temperature(celsius:))
        add(.humidity, values.humidity, BTHomeObject.humidity(percent:))
        add(.pressure, values.pressure, BTHomeObject.pressure(pascals:))
        add(.battery, values.battery, BTHomeObject.battery(percent:))

        var dropped: [BTHomeField] = []
        var remaining = BTHomeField.allCases.filter { objects[$0] != nil }
        while true {
            let payload =
                config.bthome && !remaining.isEmpty ? bthomePayload(remaining.compactMap { objects[$0] }) : nil
            let minimum = min(config.minimumNameLength, config.localName.count)
            if let plan = fit(config.localName, minimumCharacters: minimum, payload: payload) {
                return SensorAdvertisementPlan(
                    data: plan.data, bytes: plan.bytes, dropped: dropped, unrepresentable: unrepresentable,
                    nameShortened: plan.shortened)
            }
            if payload == nil {
                // Only flags, UUID and name are left: take the name to 1 character.
                let plan =
                    fit(config.localName, minimumCharacters: 1, payload: nil)
                    ?? fit("", minimumCharacters: 0, payload: nil)
                return SensorAdvertisementPlan(
                    data: plan?.data ?? AdvertisingData(), bytes: plan?.bytes ?? [], dropped: dropped,
                    unrepresentable: unrepresentable, nameShortened: plan?.shortened ?? true)
            }
            if let first = remaining.first {
                remaining.removeFirst()
                dropped.append(first)
            }
        }
    }

    private static func bthomePayload(_ objects: [BTHomeObject]) -> [UInt8]? {
        try? BTHomeServiceData(objects: objects).encode()
    }

    /// The advertisement with `payload` and the longest prefix of `name` that
    /// fits, if that prefix has at least `minimumCharacters` characters.
    private static func fit(
        _ name: String, minimumCharacters: Int, payload: [UInt8]?
    ) -> (data: AdvertisingData, bytes: [UInt8], shortened: Bool)? {
        var data = AdvertisingData(flags: .leGeneralDiscoverable, serviceUUIDs: [.environmentalSensing])
        if let payload { data.serviceData[.bthome] = payload }
        let fixed = (try? data.encode(limit: .extended))?.count ?? Int.max
        let room = AdvertisingDataLimit.legacy.maximumLength - fixed - 2
        var prefix = ""
        var used = 0
        for character in name {
            used += character.utf8.count
            if used > room { break }
            prefix.append(character)
        }
        guard prefix.count >= minimumCharacters else { return nil }
        if !prefix.isEmpty {
            data.localName = prefix
            data.isCompleteName = prefix == name
        }
        guard let bytes = try? data.encode(limit: .legacy) else { return nil }
        return (data, bytes, prefix != name)
    }
}
