/// How one BTHome v2 object id is read (bthome.io, "BTHome format v2"; the
/// table of Home Assistant's `bthome-ble`, which the tests use as the oracle).
public struct BTHomeObjectType: Sendable, Hashable {
    /// How the value bytes are read.
    public enum Format: Sendable, Hashable {
        /// Little-endian unsigned integer times the factor.
        case unsigned
        /// Little-endian two's complement integer times the factor.
        case signed
        /// A length byte, then UTF-8 text.
        case text
        /// A length byte, then bytes (shown as hex).
        case raw
        /// `uint32` Unix seconds.
        case timestamp
        /// A button event code.
        case button
        /// A dimmer event code and a step count.
        case dimmer
        /// A length byte (low 5 bits: argument count), an opcode, arguments.
        case command
        /// 0x00 packet id: de-duplication, not a reading.
        case packetID
        /// 0xF0 device type id (`uint16`): device information, not a reading.
        case deviceTypeID
        /// 0xF1 / 0xF2 firmware version, least significant part first.
        case firmware
    }

    /// The object id.
    public let id: UInt8
    /// Sensor, binary sensor or event; nil for the packet id and device information.
    public let kind: Reading.Kind?
    /// The reading's name (before any `_N` suffix).
    public let name: String
    /// The value's length in bytes; nil when a length byte gives it.
    public let length: Int?
    /// How to read it.
    public let format: Format
    /// The factor a number is multiplied by.
    public let factor: Double
    /// The unit.
    public let unit: String?

    /// Objects of one group in one packet are numbered `_1`, `_2`, ...: same
    /// kind, name and unit (0x02 and 0x45 are both temperature in °C).
    var group: String { "\(kind?.rawValue ?? "")/\(name)/\(unit ?? "")" }

    /// Decimal places the value is rounded to: as many as the factor has
    /// (0.01 gives 2, 0.35 gives 1), so 25.06 reads as 25.06, not 25.060000000000002.
    var decimalPlaces: Int {
        guard factor > 0 else { return 0 }
        var places = 0
        var scaled = factor
        while scaled < 1, places < 12 {
            scaled *= 10
            places += 1
        }
        return places
    }
}

extension BTHomeObjectType {
    private static func sensor(
        _ id: UInt8, _ name: String, _ length: Int, _ factor: Double = 1, _ unit: String? = nil, signed: Bool = false
    ) -> BTHomeObjectType {
        BTHomeObjectType(
            id: id, kind: .sensor, name: name, length: length, format: signed ? .signed : .unsigned, factor: factor,
            unit: unit)
    }

    private static func binary(_ id: UInt8, _ name: String) -> BTHomeObjectType {
        BTHomeObjectType(id: id, kind: .binary, name: name, length: 1, format: .unsigned, factor: 1, unit: nil)
    }

    /// Every object id BTHome v2 defines, in id order.
    public static let all: [BTHomeObjectType] = [
        BTHomeObjectType(id: 0x00, kind: nil, name: "packet_id", length: 1, format: .packetID, factor: 1, unit: nil),
        sensor(0x01, "battery", 1, 1, "%"),
        sensor(0x02, "temperature", 2, 0.01, "°C", signed: true),
        sensor(0x03, "humidity", 2, 0.01, "%"),
        sensor(0x04, "pressure", 3, 0.01, "hPa"),
        sensor(0x05, "illuminance", 3, 0.01, "lx"),
        sensor(0x06, "mass", 2, 0.01, "kg"),
        sensor(0x07, "mass", 2, 0.01, "lb"),
        sensor(0x08, "dew_point", 2, 0.01, "°C", signed: true),
        sensor(0x09, "count", 1),
        sensor(0x0A, "energy", 3, 0.001, "kWh"),
        sensor(0x0B, "power", 3, 0.01, "W"),
        sensor(0x0C, "voltage", 2, 0.001, "V"),
        sensor(0x0D, "pm25", 2, 1, "µg/m³"),
        sensor(0x0E, "pm10", 2, 1, "µg/m³"),
        binary(0x0F, "generic"),
        binary(0x10, "power"),
        binary(0x11, "opening"),
        sensor(0x12, "carbon_dioxide", 2, 1, "ppm"),
        sensor(0x13, "volatile_organic_compounds", 2, 1, "µg/m³"),
        sensor(0x14, "moisture", 2, 0.01, "%"),
        binary(0x15, "battery"),
        binary(0x16, "battery_charging"),
        binary(0x17, "carbon_monoxide"),
        binary(0x18, "cold"),
        binary(0x19, "connectivity"),
        binary(0x1A, "door"),
        binary(0x1B, "garage_door"),
        binary(0x1C, "gas"),
        binary(0x1D, "heat"),
        binary(0x1E, "light"),
        binary(0x1F, "lock"),
        binary(0x20, "moisture"),
        binary(0x21, "motion"),
        binary(0x22, "moving"),
        binary(0x23, "occupancy"),
        binary(0x24, "plug"),
        binary(0x25, "presence"),
        binary(0x26, "problem"),
        binary(0x27, "running"),
        binary(0x28, "safety"),
        binary(0x29, "smoke"),
        binary(0x2A, "sound"),
        binary(0x2B, "tamper"),
        binary(0x2C, "vibration"),
        binary(0x2D, "window"),
        sensor(0x2E, "humidity", 1, 1, "%"),
        sensor(0x2F, "moisture", 1, 1, "%"),
        BTHomeObjectType(id: 0x3A, kind: .event, name: "button", length: 1, format: .button, factor: 1, unit: nil),
        BTHomeObjectType(id: 0x3B, kind: .event, name: "command", length: nil, format: .command, factor: 1, unit: nil),
        BTHomeObjectType(id: 0x3C, kind: .event, name: "dimmer", length: 2, format: .dimmer, factor: 1, unit: nil),
        sensor(0x3D, "count", 2),
        sensor(0x3E, "count", 4),
        sensor(0x3F, "rotation", 2, 0.1, "°", signed: true),
        sensor(0x40, "distance", 2, 1, "mm"),
        sensor(0x41, "distance", 2, 0.1, "m"),
        sensor(0x42, "duration", 3, 0.001, "s"),
        sensor(0x43, "current", 2, 0.001, "A"),
        sensor(0x44, "speed", 2, 0.01, "m/s"),
        sensor(0x45, "temperature", 2, 0.1, "°C", signed: true),
        sensor(0x46, "uv_index", 1, 0.1),
        sensor(0x47, "volume", 2, 0.1, "L"),
        sensor(0x48, "volume", 2, 1, "mL"),
        sensor(0x49, "volume_flow_rate", 2, 0.001, "m³/h"),
        sensor(0x4A, "voltage", 2, 0.1, "V"),
        sensor(0x4B, "gas", 3, 0.001, "m³"),
        sensor(0x4C, "gas", 4, 0.001, "m³"),
        sensor(0x4D, "energy", 4, 0.001, "kWh"),
        sensor(0x4E, "volume", 4, 0.001, "L"),
        sensor(0x4F, "water", 4, 0.001, "L"),
        BTHomeObjectType(
            id: 0x50, kind: .sensor, name: "timestamp", length: 4, format: .timestamp, factor: 1, unit: nil),
        sensor(0x51, "acceleration", 2, 0.001, "m/s²"),
        sensor(0x52, "gyroscope", 2, 0.001, "°/s"),
        BTHomeObjectType(id: 0x53, kind: .sensor, name: "text", length: nil, format: .text, factor: 1, unit: nil),
        BTHomeObjectType(id: 0x54, kind: .sensor, name: "raw", length: nil, format: .raw, factor: 1, unit: nil),
        sensor(0x55, "volume_storage", 4, 0.001, "L"),
        sensor(0x56, "conductivity", 2, 1, "µS/cm"),
        sensor(0x57, "temperature", 1, 1, "°C", signed: true),
        sensor(0x58, "temperature", 1, 0.35, "°C", signed: true),
        sensor(0x59, "count", 1, signed: true),
        sensor(0x5A, "count", 2, signed: true),
        sensor(0x5B, "count", 4, signed: true),
        sensor(0x5C, "power", 4, 0.01, "W", signed: true),
        sensor(0x5D, "current", 2, 0.001, "A", signed: true),
        sensor(0x5E, "direction", 2, 0.01, "°"),
        sensor(0x5F, "precipitation", 2, 0.1, "mm"),
        sensor(0x60, "channel", 1),
        sensor(0x61, "rotational_speed", 2, 1, "rpm"),
        sensor(0x62, "speed", 4, 0.000001, "m/s", signed: true),
        sensor(0x63, "acceleration", 4, 0.000001, "m/s²", signed: true),
        sensor(0x64, "light_level", 1),
        sensor(0x65, "settings_revision", 1),
        BTHomeObjectType(
            id: 0xF0, kind: nil, name: "device_type_id", length: 2, format: .deviceTypeID, factor: 1, unit: nil),
        BTHomeObjectType(id: 0xF1, kind: nil, name: "firmware", length: 4, format: .firmware, factor: 1, unit: nil),
        BTHomeObjectType(id: 0xF2, kind: nil, name: "firmware", length: 3, format: .firmware, factor: 1, unit: nil),
    ]

    /// The type of each object id, indexed by id (nil: not defined).
    public static let byID: [BTHomeObjectType?] = {
        var table = [BTHomeObjectType?](repeating: nil, count: 256)
        for type in all { table[Int(type.id)] = type }
        return table
    }()
}
