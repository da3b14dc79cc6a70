import BLE
import Testing

@Suite struct PeripheralIdentifierTests {
    @Test func versionFiveMatchesTheRFCExample() {
        // RFC 9562 appendix: v5 of "www.example.com" in the DNS namespace.
        let dns: [UInt8] = [
            0x6B, 0xA7, 0xB8, 0x10, 0x9D, 0xAD, 0x11, 0xD1, 0x80, 0xB4, 0x00, 0xC0, 0x4F, 0xD4, 0x30, 0xC8,
        ]
        let id = PeripheralIdentifier(nameBasedIn: dns, name: Array("www.example.com".utf8))
        #expect(id.uuidString == "2ed6657d-e927-568b-95e1-2665a8aea6a2")
    }

    @Test func sameAdapterAddressAndTypeGiveTheSameIdentifierInAnyCase() {
        let a = PeripheralIdentifier(adapter: "00:11:22:33:44:55", address: "aa:bb:cc:dd:ee:ff", addressType: .random)
        let b = PeripheralIdentifier(adapter: "00:11:22:33:44:55", address: "AA:BB:CC:DD:EE:FF", addressType: .random)
        #expect(a == b)
        #expect(PeripheralIdentifier(a.uuidString) == a)
    }

    @Test func addressTypeAndAdapterTellDevicesApart() {
        let base = PeripheralIdentifier(
            adapter: "00:11:22:33:44:55", address: "AA:BB:CC:DD:EE:FF", addressType: .random)
        let otherType = PeripheralIdentifier(
            adapter: "00:11:22:33:44:55", address: "AA:BB:CC:DD:EE:FF", addressType: .public)
        let otherAdapter = PeripheralIdentifier(
            adapter: "00:11:22:33:44:66", address: "AA:BB:CC:DD:EE:FF", addressType: .random)
        #expect(base != otherType)
        #expect(base != otherAdapter)
    }
}
