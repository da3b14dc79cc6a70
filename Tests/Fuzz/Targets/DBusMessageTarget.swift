import BLE
import BLETesting
import BlueZ
import DBus
import GATT

/// A D-Bus message from the bus in wire form, read as a connection reads one
/// from its socket (the header checked in full, the body as it is read),
/// decoded into values and into what the agent makes of BlueZ's messages:
/// the object tree's deltas, property maps, Device1 advertisement data, GATT
/// request options, and the typed shapes of BlueZ's signals.
///
/// Checks: every message libdbus's own reader accepts (it validates the
/// whole body first) is accepted, with the same header, the same values and
/// the same values through the body cursor; the decoded body, marshalled
/// again, reads back to the same wire bytes (reader and writer agree).
enum DBusMessageTarget {
    static let target = FuzzTarget(
        name: "dbus-message", summary: "D-Bus messages in wire form: body values, BlueZ deltas and property maps",
        seeds: { seeds() }, body: run)

    static func run(_ input: [UInt8]) throws(FuzzFinding) {
        try compareWithLibDBus(input)
        guard let message = try? DBusMessage(wireBytes: input) else { return }
        _ = message.description
        _ = message.error
        _ = message.withBodyReader { BodyRendering.render($0) }
        if let delta = BlueZDecoding.delta(of: message) { interpret(delta) }
        guard let arguments = try? message.arguments() else { return }
        for argument in arguments { interpret(argument) }
        decodeTyped(arguments)
        let first = try remarshal(arguments, from: input)
        let reread: [DBusValue]
        do {
            reread = try DBusMessage(wireBytes: first).arguments()
        } catch {
            throw FuzzFinding("the body of \(input), marshalled again as \(first), does not read back: \(error)")
        }
        let second = try remarshal(reread, from: first)
        try require(first == second, "the body of \(input) marshals as \(first), read back and marshalled as \(second)")
    }

    /// What libdbus's reader accepts, the connection's reader reads the same. Messages of a type the
    /// specification does not define are left out: libdbus reads them, a connection drops them, as the
    /// specification asks, and a `DBusMessage` has no kind for them.
    private static func compareWithLibDBus(_ input: [UInt8]) throws(FuzzFinding) {
        guard input.count > 1, (1...4).contains(input[1]), let reference = try? DBusMessage(libdbusWireBytes: input)
        else { return }
        // libdbus reads the first message of longer bytes; the connection's reader is given exactly one.
        let exact = Array(input.prefix(declaredLength(input)))
        let ours: DBusMessage
        do {
            ours = try DBusMessage(wireBytes: exact)
        } catch {
            throw FuzzFinding("libdbus reads \(input), the wire reader refuses it: \(error)")
        }
        try require(
            ours.description == reference.description && ours.serial == reference.serial
                && ours.replySerial == reference.replySerial && ours.noReplyExpected == reference.noReplyExpected,
            "the header of \(input) reads as \(ours), libdbus reads \(reference)")
        let expected: [DBusValue]
        do {
            expected = try reference.arguments()
        } catch {
            return
        }
        let values: [DBusValue]
        do {
            values = try ours.arguments()
        } catch {
            throw FuzzFinding("libdbus reads the body of \(input), the wire reader throws \(error)")
        }
        try require(values == expected, "the body of \(input) reads as \(values), libdbus reads \(expected)")
        let cursor = ours.withBodyReader { BodyRendering.render($0) }
        let rendered = expected.map(BodyRendering.render).joined(separator: " ")
        try require(cursor == rendered, "the body cursor reads \(input) as \(cursor), libdbus as \(rendered)")
    }

    /// The length a message's fixed header declares (at most the input's).
    private static func declaredLength(_ input: [UInt8]) -> Int {
        guard input.count >= 16 else { return input.count }
        let bigEndian = input[0] == UInt8(ascii: "B")
        func word(_ offset: Int) -> Int {
            let bytes = input[offset..<(offset + 4)].map(Int.init)
            return bigEndian
                ? bytes[0] << 24 | bytes[1] << 16 | bytes[2] << 8 | bytes[3]
                : bytes[3] << 24 | bytes[2] << 16 | bytes[1] << 8 | bytes[0]
        }
        let length = ((16 + word(12) + 7) & ~7) + word(4)
        return min(length, input.count)
    }

    private static func remarshal(_ arguments: [DBusValue], from input: [UInt8]) throws(FuzzFinding) -> [UInt8] {
        do {
            return try DBusMessage.signal(
                path: .root, interface: "org.bleagent.Fuzz", member: "Body", arguments: arguments
            )
            .wireBytes()
        } catch {
            throw FuzzFinding("the body \(arguments) of \(input), accepted by libdbus, does not marshal: \(error)")
        }
    }

    private static func interpret(_ delta: ObjectTreeDelta) {
        switch delta {
        case .interfacesAdded(_, let interfaces):
            if let device = interfaces["org.bluez.Device1"] { _ = AdvertisementData(device1: device) }
        case .propertiesChanged(_, _, let changed, _):
            _ = AdvertisementData(device1: changed)
        default:
            break
        }
    }

    /// Every reading of a value the BlueZ backends apply to an argument.
    private static func interpret(_ value: DBusValue) {
        _ = PropertyValue(dbus: value)
        _ = AdvertisementData(device1: BlueZDecoding.properties(value))
        for (_, properties) in BlueZDecoding.interfaces(value) { _ = AdvertisementData(device1: properties) }
        _ = BlueZDecoding.managedObjects(value)
        _ = try? GATTRequestOptions(value)
        if let text = value.stringValue { _ = BluetoothUUID(text) }
    }

    /// The shapes BlueZ's signals and replies have, decoded as typed Swift values.
    private static func decodeTyped(_ arguments: [DBusValue]) {
        _ = try? arguments.decode(ObjectPath.self, [String: [String: DBusValue]].self)
        _ = try? arguments.decode(ObjectPath.self, [String].self)
        _ = try? arguments.decode(String.self, [String: DBusValue].self, [String].self)
        _ = try? arguments.decode([ObjectPath: [String: [String: DBusValue]]].self)
        _ = try? arguments.decode([UInt8].self, [String: DBusValue].self)
        _ = try? arguments.decode(UnixFD.self, UInt16.self)
        _ = try? arguments.decode(String.self, String.self, String.self)
    }

    /// A constant of the seeds (valid by construction).
    private static func path(_ text: String) -> ObjectPath { try! ObjectPath(text) }
    private static func signature(_ text: String) -> DBusSignature { try! DBusSignature(text) }

    /// BlueZ's messages the agent reads, built with the writer.
    static func seeds() -> [[UInt8]] {
        let device: DBusValue = .dictionary(
            key: .string, value: .variant,
            [
                (.string("Address"), .variant(.string("C0:FF:EE:00:00:01"))),
                (.string("AddressType"), .variant(.string("random"))),
                (.string("Name"), .variant(.string("POS-1"))),
                (.string("Alias"), .variant(.string("C0-FF-EE-00-00-01"))),
                (.string("RSSI"), .variant(.int16(-61))),
                (.string("TxPower"), .variant(.int16(4))),
                (.string("UUIDs"), .variant(.array(.string, [.string("0000181a-0000-1000-8000-00805f9b34fb")]))),
                (
                    .string("ManufacturerData"),
                    .variant(
                        .dictionary(key: .uint16, value: .variant, [(.uint16(0x004C), .variant(.bytes([2, 21])))]))
                ),
                (
                    .string("ServiceData"),
                    .variant(
                        .dictionary(
                            key: .string, value: .variant,
                            [(.string("0000fcd2-0000-1000-8000-00805f9b34fb"), .variant(.bytes([0x40, 0x01, 0x57])))]))
                ),
                (.string("AdvertisingFlags"), .variant(.bytes([0x06]))),
                (.string("Connected"), .variant(.boolean(false))),
            ])
        let devicePath: DBusValue = .objectPath(path("/org/bluez/hci0/dev_C0_FF_EE_00_00_01"))
        let interfaces: DBusValue = .dictionary(
            key: .string, value: .dictionary(key: .string, value: .variant),
            [
                (.string("org.bluez.Device1"), device)
            ])
        let options: DBusValue = .dictionary(
            key: .string, value: .variant,
            [
                (.string("device"), .variant(devicePath)), (.string("offset"), .variant(.uint16(4))),
                (.string("mtu"), .variant(.uint16(247))), (.string("link"), .variant(.string("LE"))),
                (.string("prepare-authorize"), .variant(.boolean(true))),
            ])
        let bodies: [(String, String, ObjectPath, [DBusValue])] = [
            ("org.freedesktop.DBus.ObjectManager", "InterfacesAdded", .root, [devicePath, interfaces]),
            (
                "org.freedesktop.DBus.ObjectManager", "InterfacesRemoved", .root,
                [devicePath, .array(.string, [.string("org.bluez.Device1")])]
            ),
            (
                "org.freedesktop.DBus.Properties", "PropertiesChanged",
                path("/org/bluez/hci0/dev_C0_FF_EE_00_00_01"),
                [.string("org.bluez.Device1"), device, .array(.string, [.string("Name")])]
            ),
            (
                "org.bleagent.Fuzz", "GetManagedObjects", .root,
                [.dictionary(key: .objectPath, value: interfaces.type, [(devicePath, interfaces)])]
            ),
            ("org.bluez.GattCharacteristic1", "WriteValue", .root, [.bytes([1, 2, 3]), options]),
            (
                "org.bleagent.Fuzz", "Shapes", .root,
                [
                    .structure([.byte(1), .boolean(true), .int32(-1), .uint64(7), .double(2.5)]),
                    .signature(signature("a(yv)")), .variant(.variant(.array(.int16, [.int16(3)]))),
                ]
            ),
        ]
        return bodies.compactMap { interface, member, path, arguments in
            try? DBusMessage.signal(path: path, interface: interface, member: member, arguments: arguments).wireBytes()
        }
    }
}
