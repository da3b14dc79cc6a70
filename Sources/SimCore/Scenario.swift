import GATT
import VirtualPaymentTerminal

/// A simulated world: the local adapters and the virtual devices on the air around them.
///
/// Read from a JSON scenario file by `Scenario.parse(_:)`; the format is documented in
/// docs/blesim.md.
public struct Scenario: Sendable, Equatable {
    /// The local adapters, hci0 first.
    public var adapters: [AdapterSpec]
    /// The virtual devices on the air.
    public var devices: [VirtualDevice]
    /// Seed of the random generator behind noise and advertising jitter.
    public var seed: UInt64
    /// Seconds a temporary (undiscovered-again) device object lives; main.conf's
    /// `TemporaryTimeout`, default 30. 0 keeps temporary devices until discovery stops.
    public var temporaryTimeout: Double
    /// Seconds before a Connect to a device that cannot be reached fails (bluetoothd waits for
    /// the kernel's LE connection timeout; scenarios keep it short). Default 2.
    public var connectFailSeconds: Double = 2
    /// Seconds a successful Connect takes before Connected becomes true. Default 0.02.
    public var connectSeconds: Double = 0.02
    /// The ATT MTU every link negotiates. Default 247.
    public var mtu: UInt16 = 247
    /// Seconds before an ATT request the peer never answers times out (bluetoothd's
    /// `ATT_TIMEOUT_INTERVAL`, 30 s) and the link drops. Default 30.
    public var attTimeout: Double = 30
    /// Whether an adapter keeps advertising while a central is connected to it. The kernel advertises in
    /// the peripheral role only when the controller's LE states allow connectable advertising while a
    /// link is up; btvirt's controllers (the VM's reference run) do not, so the default is false: the
    /// advertisement is off the air until the link ends.
    public var advertiseWhileConnected = false
    /// The link model capping notifications and write commands (nil: no cap, the default).
    public var link: LinkModel? = nil
    /// Faults the scenario schedules (its `faults` list), in file order.
    public var faults: [ScheduledFault] = []
    /// Virtual centrals the scenario declares (its `centrals` list).
    public var centrals: [ScenarioCentral] = []

    /// A scenario from its parts.
    public init(
        adapters: [AdapterSpec], devices: [VirtualDevice], seed: UInt64 = 1, temporaryTimeout: Double = 30
    ) {
        self.adapters = adapters
        self.devices = devices
        self.seed = seed
        self.temporaryTimeout = temporaryTimeout
    }
}

/// A local adapter (hciN) of the simulation.
public struct AdapterSpec: Sendable, Equatable {
    /// Its address.
    public var address: DeviceAddress
    /// "public" or "random".
    public var addressType: AddressType
    /// `Name` (the system name); `Alias` defaults to it.
    public var name: String
    /// Where it sits, in metres, for distances to devices.
    public var position: Position
    /// Whether it starts powered (bluetoothd powers adapters on at start with AutoEnable).
    public var powered: Bool
    /// The weakest signal it receives, dBm: weaker advertisements are lost. Default -100.
    public var sensitivity: Int

    /// An adapter from its parts.
    public init(
        address: DeviceAddress, addressType: AddressType = .public, name: String,
        position: Position = .origin, powered: Bool = true, sensitivity: Int = -100
    ) {
        self.address = address
        self.addressType = addressType
        self.name = name
        self.position = position
        self.powered = powered
        self.sensitivity = sensitivity
    }

    /// The default adapter `index` (hci0, hci1, ...): address 00:AA:01:00:00:0N, name "blesim #N".
    public static func standard(index: Int) -> AdapterSpec {
        let low = UInt8(truncatingIfNeeded: index)
        let high = UInt8(truncatingIfNeeded: index >> 8)
        return AdapterSpec(
            address: DeviceAddress(validBytes: (0x00, 0xAA, 0x01, 0x00, high, low)),
            name: "blesim #\(index)")
    }
}

/// A point in the simulated plane, in metres.
public struct Position: Sendable, Equatable {
    /// East, metres.
    public var x: Double
    /// North, metres.
    public var y: Double

    /// A point.
    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }

    /// (0, 0), where adapters sit by default.
    public static let origin = Position(x: 0, y: 0)

    /// Straight-line distance to `other`, metres.
    public func distance(to other: Position) -> Double {
        let dx = x - other.x
        let dy = y - other.y
        return (dx * dx + dy * dy).squareRoot()
    }
}

/// A virtual peripheral that advertises.
public struct VirtualDevice: Sendable, Equatable {
    public static func == (lhs: VirtualDevice, rhs: VirtualDevice) -> Bool {
        lhs.address == rhs.address && lhs.addressType == rhs.addressType && lhs.advertisement == rhs.advertisement
            && lhs.intervalMilliseconds == rhs.intervalMilliseconds && lhs.connectable == rhs.connectable
            && lhs.radio == rhs.radio && lhs.gatt == rhs.gatt && (lhs.terminal == nil) == (rhs.terminal == nil)
            && lhs.sensor == rhs.sensor
    }

    /// Its address.
    public var address: DeviceAddress
    /// "public" or "random".
    public var addressType: AddressType
    /// What it advertises (advertising data and scan response, merged as the kernel reports them).
    public var advertisement: Advertisement
    /// Advertising interval, milliseconds (BLE allows 20 ms to 10.24 s; 0 to 10 ms of random
    /// delay are added to every event, as the spec's advDelay).
    public var intervalMilliseconds: Double
    /// Whether its advertisements are connectable (ADV_IND) or not (ADV_NONCONN_IND).
    public var connectable: Bool
    /// How strongly each adapter hears it.
    public var radio: RadioModel
    /// Its GATT database, served once a client connects (nil: no services).
    public var gatt: GATTDatabaseSpec?
    /// A virtual payment terminal's logic, when the device is one (its `gatt` is the profile's).
    public var terminal: VirtualTerminal?
    /// Readings that change over time in its service data (a BTHome sensor, an Eddystone TLM beacon).
    public var sensor: SimulatedSensor?
    /// Whether the scenario gave a GATT database.
    public var hasGATTDatabase: Bool { gatt != nil }

    /// A device from its parts.
    public init(
        address: DeviceAddress, addressType: AddressType = .public, advertisement: Advertisement,
        intervalMilliseconds: Double = 100, connectable: Bool = true, radio: RadioModel = RadioModel(),
        gatt: GATTDatabaseSpec? = nil
    ) {
        self.address = address
        self.addressType = addressType
        self.advertisement = advertisement
        self.intervalMilliseconds = intervalMilliseconds
        self.connectable = connectable
        self.radio = radio
        self.gatt = gatt
    }
}

/// The content of a device's advertising (AD structures), as values.
public struct Advertisement: Sendable, Equatable {
    /// The Flags AD (0x01), for example 0x06 (LE General Discoverable, BR/EDR not supported).
    public var flags: UInt8?
    /// The local name.
    public var name: String?
    /// Whether `name` is the complete (0x09) or shortened (0x08) local name.
    public var nameIsComplete: Bool
    /// Service UUIDs.
    public var serviceUUIDs: [BluetoothUUID]
    /// Manufacturer specific data, by company identifier, in advertised order.
    public var manufacturerData: [ManufacturerDatum]
    /// Service data, by service UUID, in advertised order.
    public var serviceData: [ServiceDatum]
    /// The TX Power Level AD (dBm).
    public var txPower: Int8?
    /// The Appearance AD.
    public var appearance: UInt16?
    /// AD structures carried as they are (a local advertisement's SolicitUUIDs and Data).
    public var rawStructures: [RawADStructure] = []

    /// An advertisement from its parts.
    public init(
        flags: UInt8? = 0x06, name: String? = nil, nameIsComplete: Bool = true, serviceUUIDs: [BluetoothUUID] = [],
        manufacturerData: [ManufacturerDatum] = [], serviceData: [ServiceDatum] = [], txPower: Int8? = nil,
        appearance: UInt16? = nil
    ) {
        self.flags = flags
        self.name = name
        self.nameIsComplete = nameIsComplete
        self.serviceUUIDs = serviceUUIDs
        self.manufacturerData = manufacturerData
        self.serviceData = serviceData
        self.txPower = txPower
        self.appearance = appearance
    }

    /// Whether the flags say LE Limited (0x01) or General (0x02) Discoverable mode.
    public var isDiscoverable: Bool { (flags ?? 0) & 0x03 != 0 }
}

/// One manufacturer specific data AD: a company identifier and its bytes.
public struct ManufacturerDatum: Sendable, Equatable {
    /// The Bluetooth SIG company identifier.
    public var company: UInt16
    /// The data after the identifier.
    public var data: [UInt8]

    /// A datum.
    public init(company: UInt16, data: [UInt8]) {
        self.company = company
        self.data = data
    }
}

/// One service data AD: a service UUID and its bytes.
public struct ServiceDatum: Sendable, Equatable {
    /// The service UUID.
    public var uuid: BluetoothUUID
    /// The data after the UUID.
    public var data: [UInt8]

    /// A datum.
    public init(uuid: BluetoothUUID, data: [UInt8]) {
        self.uuid = uuid
        self.data = data
    }
}
