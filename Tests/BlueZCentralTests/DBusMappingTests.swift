import BLE
import BlueZ
import DBus
import GATT
import Testing

@Suite("BlueZ Common: D-Bus values and errors as the BLE layer sees them")
struct DBusMappingTests {
    @Test("every D-Bus type in PropertyValue's table maps as documented, variants unwrapped")
    func propertyValueTable() {
        #expect(PropertyValue(dbus: .variant(.boolean(true))) == .bool(true))
        #expect(PropertyValue(dbus: .int16(-60)) == .int(-60))
        #expect(PropertyValue(dbus: .uint16(0x004C)) == .uint(0x4C))
        #expect(PropertyValue(dbus: .objectPath(.root)) == .objectPath("/"))
        #expect(PropertyValue(dbus: .bytes([1, 2])) == .bytes([1, 2]))
        #expect(PropertyValue(dbus: .array(.byte, [.byte(3)])) == .bytes([3]))
        #expect(PropertyValue(dbus: .array(.string, [.string("a")])) == .array([.string("a")]))
        let manufacturer = DBusValue.dictionary(
            key: .uint16, value: .variant, [(.uint16(0xFFFF), .variant(.bytes([0x70])))])
        #expect(PropertyValue(dbus: manufacturer) == .dictionary([.uint(0xFFFF): .bytes([0x70])]))
        #expect(PropertyValue(dbus: .signature(DBusSignature.empty)) == nil)
    }

    @Test("doubles compare by their bits: a peer's NaN keys make one entry, not one each")
    func doublesByBits() throws {
        let quiet = Double.nan, signalling = Double(bitPattern: 0x7FF4_0000_0000_0001)
        #expect(PropertyValue.double(quiet) == .double(quiet))
        #expect(PropertyValue.double(quiet) != .double(signalling))
        #expect(PropertyValue.double(0.0) != .double(-0.0))
        #expect(DBusValue.double(quiet) == .double(quiet))
        #expect(DBusValue.double(0.0) != .double(-0.0))
        let entries = (0..<1_000).map { index in
            (DBusValue.double(index.isMultiple(of: 2) ? quiet : signalling), DBusValue.variant(.int32(Int32(index))))
        }
        let dictionary = DBusValue.dictionary(key: .double, value: .variant, entries)
        let expected = PropertyValue.dictionary([.double(quiet): .int(998), .double(signalling): .int(999)])
        #expect(PropertyValue(dbus: dictionary) == expected)
        let message = try DBusMessage.signal(
            path: .root, interface: "org.bleagent.Test", member: "Doubles", arguments: [dictionary])
        let read = try DBusMessage(wireBytes: message.wireBytes()).withBodyReader { PropertyValue(reading: $0) }
        #expect(read == expected)
    }

    @Test("a GetManagedObjects body decodes to the snapshot, skipping nothing valid")
    func managedObjects() {
        let props = DBusValue.dictionary(
            key: .string, value: .variant, [(.string("Powered"), .variant(.boolean(true)))])
        let interfaces = DBusValue.dictionary(
            key: .string, value: .dictionary(key: .string, value: .variant),
            [(.string(BlueZInterface.adapter), props)])
        let tree = DBusValue.dictionary(
            key: .objectPath, value: .dictionary(key: .string, value: .dictionary(key: .string, value: .variant)),
            [(.objectPath(try! ObjectPath("/org/bluez/hci0")), interfaces)])
        #expect(
            BlueZDecoding.managedObjects(tree) == [
                "/org/bluez/hci0": [BlueZInterface.adapter: ["Powered": .bool(true)]]
            ])
    }

    @Test("BlueZ errors keep their name; InProgress stays inProgress; bus errors map to their codes")
    func errorMapping() {
        let inProgress = BLEError(dbus: DBusError("org.bluez.Error.InProgress", "busy"))
        #expect(inProgress.code == .inProgress)
        #expect(inProgress.bluezError?.name == .inProgress)
        #expect(BLEError(dbus: DBusError(.accessDenied)).code == .unauthorized)
        #expect(
            BLEError(dbus: DBusError(.accessDenied)).bluezError?.name.rawValue == DBusError.Name.accessDenied.rawValue)
        #expect(BLEError(dbus: DBusError(.noReply)).code == .timeout)
        #expect(BLEError(dbus: DBusError(.serviceUnknown)).code == .unavailable)
        #expect(BLEError(dbus: DBusError(.unknownObject)).code == .notConnected)
        #expect(BLEError(dbus: DBusError("org.bluez.Error.NotSupported")).code == .operationNotSupported)
        #expect(BLEError(callFailure: CancellationError()).code == .cancelled)
    }
}
