import GATT

/// A virtual device's GATT database as a scenario describes it (docs/blesim.md, "gatt").
/// GAP (0x1800) and GATT (0x1801) come first on the device, as on a real one; bluetoothd does
/// not export them, so the listed services start at handle 0x000a.
public struct GATTDatabaseSpec: Sendable, Equatable {
    /// The services, in handle order.
    public var services: [GATTServiceSpec]

    /// A database of `services`.
    public init(services: [GATTServiceSpec]) {
        self.services = services
    }

    /// The first handle of the listed services (after GAP 0x0001-0x0005 and GATT 0x0006-0x0009).
    public static let firstHandle: UInt16 = 0x000a
}

/// One service of a scenario's GATT database.
public struct GATTServiceSpec: Sendable, Equatable {
    /// Its UUID.
    public var uuid: BluetoothUUID
    /// Primary (true) or secondary.
    public var primary: Bool
    /// Its characteristics, in handle order.
    public var characteristics: [GATTCharacteristicSpec]
    /// The services it includes, as indices into the database's services (an Include declaration
    /// each, right after the service declaration, as the GATT specification orders them).
    public var includes: [Int] = []
    /// Handles reserved for it when more than its attributes take (bluetoothd's gatt-db gives a
    /// service the range it asked for, as GATT's 10 handles), else nil.
    public var reservedHandles: Int?

    /// A service.
    public init(uuid: BluetoothUUID, primary: Bool = true, characteristics: [GATTCharacteristicSpec]) {
        self.uuid = uuid
        self.primary = primary
        self.characteristics = characteristics
    }
}

/// One characteristic: its properties as BlueZ's flag names, its value, how the value changes.
public struct GATTCharacteristicSpec: Sendable, Equatable {
    /// Its UUID.
    public var uuid: BluetoothUUID
    /// Properties and extended properties, as `GATT.BlueZGATTFlags` reads BlueZ's flag names.
    public var flags: BlueZGATTFlags.Characteristic
    /// The value at the start.
    public var value: [UInt8]
    /// How the value changes over time.
    public var behaviour: ValueBehaviour
    /// Descriptors besides the CCCD (added for notify/indicate) and the extended properties
    /// descriptor (added for extended properties).
    public var descriptors: [GATTDescriptorSpec]

    /// A characteristic.
    public init(
        uuid: BluetoothUUID, flags: BlueZGATTFlags.Characteristic, value: [UInt8] = [],
        behaviour: ValueBehaviour = .fixed, descriptors: [GATTDescriptorSpec] = []
    ) {
        self.uuid = uuid
        self.flags = flags
        self.value = value
        self.behaviour = behaviour
        self.descriptors = descriptors
    }
}

/// One descriptor.
public struct GATTDescriptorSpec: Sendable, Equatable {
    /// Its UUID.
    public var uuid: BluetoothUUID
    /// Its value.
    public var value: [UInt8]
    /// Whether a remote may write it.
    public var writable: Bool

    /// A descriptor.
    public init(uuid: BluetoothUUID, value: [UInt8] = [], writable: Bool = false) {
        self.uuid = uuid
        self.value = value
        self.writable = writable
    }
}

/// How a characteristic's value changes on the device (each change is a notification or an
/// indication to a subscribed client).
public enum ValueBehaviour: Sendable, Equatable {
    /// Changes only when a client writes it.
    case fixed
    /// Every `periodSeconds`, the next of `values` (cycling).
    case cycle(values: [[UInt8]], periodSeconds: Double)
    /// Every `periodSeconds`, the value as an integer of `format` grows by `step` (wrapping).
    case counter(start: Int64, step: Int64, format: IntegerFormat, periodSeconds: Double)
    /// At each time (seconds since the start), the value becomes the given bytes.
    case script([(at: Double, value: [UInt8])], loop: Bool)

    public static func == (lhs: ValueBehaviour, rhs: ValueBehaviour) -> Bool {
        switch (lhs, rhs) {
        case (.fixed, .fixed): true
        case (.cycle(let v1, let p1), .cycle(let v2, let p2)): v1 == v2 && p1 == p2
        case (.counter(let a1, let b1, let c1, let d1), .counter(let a2, let b2, let c2, let d2)):
            a1 == a2 && b1 == b2 && c1 == c2 && d1 == d2
        case (.script(let s1, let l1), .script(let s2, let l2)):
            l1 == l2 && s1.map(\.at) == s2.map(\.at) && s1.map(\.value) == s2.map(\.value)
        default: false
        }
    }
}

/// A little-endian integer encoding for scenario values.
public enum IntegerFormat: String, Sendable, Equatable, CaseIterable {
    /// One byte, unsigned.
    case uint8
    /// Two bytes, unsigned.
    case uint16
    /// Four bytes, unsigned.
    case uint32
    /// One byte, signed.
    case int8
    /// Two bytes, signed.
    case int16
    /// Four bytes, signed.
    case int32

    /// Its width in bytes.
    public var width: Int {
        switch self {
        case .uint8, .int8: 1
        case .uint16, .int16: 2
        case .uint32, .int32: 4
        }
    }

    /// The values it can hold.
    public var range: ClosedRange<Int64> {
        switch self {
        case .uint8: 0...0xFF
        case .uint16: 0...0xFFFF
        case .uint32: 0...0xFFFF_FFFF
        case .int8: -0x80...0x7F
        case .int16: -0x8000...0x7FFF
        case .int32: -0x8000_0000...0x7FFF_FFFF
        }
    }

    /// `number` in this format, little-endian (truncated to the width, so counters wrap).
    public func encode(_ number: Int64) -> [UInt8] {
        (0..<width).map { UInt8(truncatingIfNeeded: number >> (8 * $0)) }
    }
}
