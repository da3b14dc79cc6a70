import BlueZ
import DBus
import GATT
import Testing

@Suite struct PeripheralPiecesTests {
    @Test func theWindowRefusesWhenFullAndReportsReadyOnceOnTheNextRelease() {
        var window = NotificationWindow(limit: 2)
        let first = window.take()
        let second = window.take()
        let third = window.take()
        #expect(first && second && !third)
        let ready = window.release()
        #expect(ready)  // a refused caller hears ready
        let again = window.take()
        let readyAgain = window.release()
        #expect(again && !readyAgain)  // nobody was refused since
    }

    @Test func optionsAreReadAsBluetoothdSendsThemAndBadTypesAreRefused() throws {
        let device = try ObjectPath("/org/bluez/hci0/dev_11_22_33_44_55_66")
        let options = try GATTRequestOptions(
            .dictionary(
                key: .string, value: .variant,
                [
                    (.string("device"), .variant(.objectPath(device))), (.string("offset"), .variant(.uint16(4))),
                    (.string("mtu"), .variant(.uint16(247))), (.string("link"), .variant(.string("LE"))),
                    (.string("prepare-authorize"), .variant(.boolean(true))),
                    (.string("future"), .variant(.string("ignored"))),
                ]))
        #expect(
            options
                == GATTRequestOptions(
                    device: device, offset: 4, mtu: ATTMTU(clamping: 247), link: "LE", prepareAuthorize: true))
        // bluetoothd omits offset when it is 0.
        #expect(try GATTRequestOptions(.dictionary(key: .string, value: .variant, [])).offset == 0)
        #expect(throws: DBusError.self) {
            try GATTRequestOptions(
                .dictionary(key: .string, value: .variant, [(.string("offset"), .variant(.uint32(4)))]))
        }
    }

    @Test func advertisementPropertiesFollowAdvertisingAPI() {
        var data = AdvertisingData(serviceUUIDs: [.battery], localName: "bat")
        data.manufacturerData[0x004C] = [1, 2]
        data.serviceData[.battery] = [50]
        data.txPower = -4
        data.appearance = 0x00C0
        let properties = AdvertisementProperties.properties(of: data, extended: true)
        func value(_ name: String) -> DBusValue? { properties.first { $0.0 == name }?.1 }
        #expect(value("Type")?.stringValue == "peripheral")
        #expect(value("ServiceUUIDs")?.arrayValue?.compactMap(\.stringValue) == [BluetoothUUID.battery.uuidString])
        #expect(value("ManufacturerData")?.signature == "a{qv}")
        #expect(value("ManufacturerData")?.dictionaryEntries?.first?.value.bytesValue == [1, 2])
        #expect(value("ServiceData")?.signature == "a{sv}")
        #expect(value("LocalName")?.stringValue == "bat")
        #expect(value("Appearance")?.integerValue == 0x00C0)
        #expect(value("Discoverable")?.boolValue == true)
        #expect(value("Includes")?.arrayValue?.compactMap(\.stringValue) == ["tx-power"])
        #expect(value("TxPower")?.integerValue == -4)
        #expect(value("SecondaryChannel")?.stringValue == "1M")
        #expect(AdvertisementProperties.properties(of: data, extended: false).allSatisfy { $0.0 != "SecondaryChannel" })
    }
}
