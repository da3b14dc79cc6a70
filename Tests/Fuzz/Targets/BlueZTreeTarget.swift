import BLE

/// BlueZ's object tree as a broken or hostile BlueZ may send it: any sequence of InterfacesAdded,
/// InterfacesRemoved, PropertiesChanged and GetManagedObjects replies, with values of any type and size,
/// applied to the central's mirror with small limits.
///
/// Checks: the mirror never holds more objects than its bound, no more evictable devices than its bound
/// after a prune, and no device whose kept Device1 values pass the byte budget (read back as the D-Bus values,
/// which add a made-up alias and the fixed-size numbers the budget leaves out).
enum BlueZTreeTarget {
    static let target = FuzzTarget(
        name: "bluez-tree", summary: "object-tree signals and replies from a broken or hostile BlueZ, into the mirror",
        seeds: { seeds }, body: run)

    static let limits = ObjectTreeMirror.Limits(
        staleDeviceAge: .seconds(10), maximumDevices: 3, maximumBufferedDeltas: 8, maximumObjects: 8)

    static let paths = [
        "/org/bluez/hci0", "/org/bluez/hci1", "/org/bluez/hci0/dev_C0_00_00_00_00_01",
        "/org/bluez/hci0/dev_C0_00_00_00_00_02", "/org/bluez/hci0/dev_C0_00_00_00_00_03",
        "/org/bluez/hci0/dev_C0_00_00_00_00_04", "/org/bluez/hci1/dev_C0_00_00_00_00_05",
        "/org/bluez/hci0/dev_C0_00_00_00_00_01/service0001",
        "/org/bluez/hci0/dev_C0_00_00_00_00_01/service0001/char0002",
        "/org/bluez/hci0/dev_C0_00_00_00_00_01/service0001/char0002/desc0003", "/", "/org/bluez",
    ]
    static let interfaces = [
        BlueZInterface.device, BlueZInterface.gattService, BlueZInterface.gattCharacteristic,
        BlueZInterface.gattDescriptor, BlueZInterface.adapter, "org.example.Odd",
    ]
    static let keys = [
        "Address", "AddressType", "Name", "Alias", "Paired", "Connected", "ServicesResolved", "RSSI", "TxPower",
        "UUIDs",
        "ManufacturerData", "ServiceData", "AdvertisingFlags", "Adapter", "UUID", "Value", "Flags", "Service", "Odd",
    ]

    static func run(_ input: [UInt8]) throws(FuzzFinding) {
        var reader = Reader(input)
        var mirror = ObjectTreeMirror(limits: limits)
        var now = BLEInstant.zero
        var serial: UInt32 = 1
        while !reader.isEmpty {
            now = now + .milliseconds(Int(reader.byte()) * 50)
            serial += 1
            switch reader.byte() % 6 {
            case 0:
                _ = mirror.receive(
                    .interfacesAdded(path: reader.pick(paths), interfaces: interfaceMap(&reader)), serial: serial,
                    now: now)
            case 1:
                _ = mirror.receive(
                    .interfacesRemoved(path: reader.pick(paths), interfaces: [reader.pick(interfaces)]), serial: serial,
                    now: now)
            case 2, 3:
                _ = mirror.receive(
                    .propertiesChanged(
                        path: reader.pick(paths), interface: reader.pick(interfaces), changed: propertyMap(&reader),
                        invalidated: reader.byte() % 4 == 0 ? [reader.pick(keys)] : []), serial: serial, now: now)
            case 4:
                var snapshot: ObjectTreeSnapshot = [:]
                for _ in 0..<Int(reader.byte() % 4) { snapshot[reader.pick(paths)] = interfaceMap(&reader) }
                mirror.snapshotRequested()
                _ = mirror.applySnapshot(snapshot, serial: reader.byte() % 2 == 0 ? serial : nil, now: now)
            default:
                _ = mirror.prune(now: now)
                try require(
                    mirror.prunableDeviceCount <= limits.maximumDevices,
                    "\(mirror.prunableDeviceCount) evictable devices after a prune, bound \(limits.maximumDevices)")
            }
            try require(
                mirror.objectCount <= limits.maximumObjects,
                "\(mirror.objectCount) objects held, bound \(limits.maximumObjects)")
            for path in paths {
                guard let device = mirror.properties(at: path, interface: BlueZInterface.device) else { continue }
                let bytes = device.values.reduce(0) { $0 + $1.payloadBytes }
                try require(
                    bytes <= ObjectTreeMirror.deviceByteBudget + 256,
                    "\(path) keeps \(bytes) bytes of Device1 values, budget \(ObjectTreeMirror.deviceByteBudget)")
            }
        }
    }

    private static func interfaceMap(_ reader: inout Reader) -> InterfaceMap {
        var map: InterfaceMap = [:]
        for _ in 0..<Int(reader.byte() % 3) { map[reader.pick(interfaces)] = propertyMap(&reader) }
        return map
    }

    private static func propertyMap(_ reader: inout Reader) -> PropertyMap {
        var map: PropertyMap = [:]
        for _ in 0..<Int(reader.byte() % 5) { map[reader.pick(keys)] = value(&reader, depth: 0) }
        return map
    }

    /// A value of any type; byte arrays and strings are short, or now and then past the budget.
    private static func value(_ reader: inout Reader, depth: Int) -> PropertyValue {
        let kind = reader.byte()
        let length = kind & 0x80 != 0 ? Int(reader.byte()) * 64 : Int(reader.byte() % 24)
        switch kind % (depth < 2 ? 9 : 7) {
        case 0: return .bool(reader.byte() % 2 == 1)
        case 1: return .int(Int64(Int8(bitPattern: reader.byte())) * 3)
        case 2: return .uint(UInt64(reader.byte()) << (reader.byte() % 16))
        case 3: return .double(Double(Int8(bitPattern: reader.byte())) / 4)
        case 4: return .string(reader.byte() % 4 == 0 ? "C0:00:00:00:00:0\(reader.byte() % 6)" : text(length))
        case 5: return .objectPath(reader.byte() % 2 == 0 ? reader.pick(paths) : "/" + text(length))
        case 6: return .bytes((0..<length).map { UInt8(truncatingIfNeeded: $0) })
        case 7:
            return .array(
                (0..<Int(reader.byte() % 4)).map { _ in
                    reader.byte() % 2 == 0
                        ? .string("0000180d-0000-1000-8000-00805f9b34fb") : value(&reader, depth: depth + 1)
                })
        default:
            var entries: [PropertyValue: PropertyValue] = [:]
            for _ in 0..<Int(reader.byte() % 4) {
                let key: PropertyValue =
                    reader.byte() % 2 == 0
                    ? .uint(UInt64(reader.byte())) : .string("0000fcd2-0000-1000-8000-00805f9b34fb")
                entries[key] = value(&reader, depth: depth + 1)
            }
            return .dictionary(entries)
        }
    }

    private static func text(_ length: Int) -> String { String(repeating: "n", count: length) }

    /// The input read a byte at a time; zeros once it is used up.
    struct Reader {
        private let bytes: [UInt8]
        private var offset = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var isEmpty: Bool { offset >= bytes.count }

        mutating func byte() -> UInt8 {
            guard offset < bytes.count else { return 0 }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func pick<T>(_ choices: [T]) -> T { choices[Int(byte()) % choices.count] }
    }

    /// Each starts with an empty GetManagedObjects reply (deltas before it are only buffered).
    static let seeds: [[UInt8]] = [
        // A device added with an address and a name, its RSSI changed, then removed.
        [0, 4, 0, 1] + [0, 0, 2, 1, 0, 2, 0, 4, 0, 0, 1, 2, 4, 5, 1] + [0, 2, 2, 0, 1, 7, 1, 0, 200, 1] + [0, 1, 2, 0],
        // Four evictable devices (past the bound of 3), expired by a prune 12.5 s later; a connected device and
        // a service of another device; a prune.
        [0, 4, 0, 1] + (2...5).flatMap { path -> [UInt8] in [0, 0, UInt8(path), 1, 0, 0] } + [250, 5]
            + [0, 0, 6, 1, 0, 1, 5, 0, 0, 1] + [0, 0, 7, 1, 1, 1, 14, 4, 4, 1] + [0, 5],
        // An object at every path (12, past the bound of 8): evictable devices make room, then objects are refused.
        [0, 4, 0, 1]
            + (0..<12).flatMap { path -> [UInt8] in [0, 0, UInt8(path), 1, path >= 2 && path <= 6 ? 0 : 1, 0] },
        // Oversized values: a device with a 16 KiB name and 15 KiB of manufacturer data, then a 16 KiB alias.
        [0, 4, 0, 1] + [0, 0, 2, 1, 0, 3, 0, 4, 0, 0, 1, 2, 0x82, 0xFF, 1, 10, 0x86, 0xF0, 1, 0, 76, 0x84, 0xF0]
            + [0, 2, 2, 0, 1, 3, 0x82, 0xFF, 1, 1],
    ]
}
