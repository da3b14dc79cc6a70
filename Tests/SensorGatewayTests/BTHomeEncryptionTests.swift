import BTHomeCrypto
import Testing

/// AES-CCM from libcrypto and the BTHome framing, with the published vectors
/// of bthome.io ("Encryption") and Home Assistant's bthome-ble tests.
@Suite struct BTHomeEncryptionTests {
    static let key = BTHomeBindKey(hex: "231d39c1d7cc1ab1aee224cd096db932")!
    static let mac = bytes("54 48 E6 8F 80 A5")

    @Test func sealsTheBTHomeExample() throws {
        // bthome.io and bthome-ble (test_v2_encryption): 25.06 °C, 50.55 %, counter 0x33221100.
        let sealed = try BTHomeEncryption.seal(
            objects: bytes("02 CA 09 03 BF 13"), deviceInfo: 0x40, mac: Self.mac, counter: 0x3322_1100, key: Self.key)
        #expect(sealed == bytes("41 a4 72 66 c9 5f 73 00 11 22 33 78 23 72 14"))
        let opened = try BTHomeEncryption.open(serviceData: sealed, address: Self.mac, key: Self.key)
        #expect(opened.objects == bytes("02 CA 09 03 BF 13"))
        #expect(opened.counter == 0x3322_1100)
    }

    @Test func opensWithTheMACInTheData() throws {
        // bthome-ble's test_bthome_with_mac_encrypted: the MAC (reversed) follows the device information byte.
        let data = bytes("43 a5 80 8f e6 48 54 f1 96 c0 6f fb 49 00 11 22 33 f0 8e cb de")
        let opened = try BTHomeEncryption.open(serviceData: data, address: bytes("00 00 00 00 00 00"), key: Self.key)
        #expect(opened.objects == bytes("02 CA 09 03 BF 13"))
        let sealed = try BTHomeEncryption.seal(
            objects: opened.objects, deviceInfo: 0x40, mac: Self.mac, counter: opened.counter, key: Self.key,
            includeMAC: true)
        #expect(sealed == data)
    }

    @Test func aWrongKeyOrAlteredDataFailsTheMIC() throws {
        let data = bytes("41 a4 72 66 c9 5f 73 00 11 22 33 78 23 72 14")
        let wrong = BTHomeBindKey(hex: "814aac74c4f17b6c1581e1ab87816b99")!
        #expect(throws: BTHomeDecryptionError.authenticationFailed) {
            try BTHomeEncryption.open(serviceData: data, address: Self.mac, key: wrong)
        }
        var altered = data
        altered[3] ^= 0x01
        #expect(throws: BTHomeDecryptionError.authenticationFailed) {
            try BTHomeEncryption.open(serviceData: altered, address: Self.mac, key: Self.key)
        }
        // Another sender: another nonce.
        #expect(throws: BTHomeDecryptionError.authenticationFailed) {
            try BTHomeEncryption.open(serviceData: data, address: bytes("54 48 E6 8F 80 A6"), key: Self.key)
        }
        #expect(throws: BTHomeDecryptionError.tooShort(9)) {
            try BTHomeEncryption.open(serviceData: Array(data.prefix(9)), address: Self.mac, key: Self.key)
        }
    }

    @Test func aKeyNeverPrints() {
        #expect("\(Self.key)" == "bind key (redacted)")
        #expect(String(reflecting: Self.key) == "bind key (redacted)")
        #expect(BTHomeBindKey(hex: "231d39c1d7cc1ab1aee224cd096db93") == nil)
        #expect(BTHomeBindKey(hex: "231d39c1d7cc1ab1aee224cd096db93g") == nil)
        #expect(BTHomeBindKey(hex: "231D39C1D7CC1AB1AEE224CD096DB932") == Self.key)
        #expect(BTHomeBindKey(hex: "231d39c1d7cc1ab1aee224cd096db93\u{FF11}") == nil)  // a fullwidth digit
    }

    @Test func aesCCMRefusesBadLengths() {
        #expect(throws: AESCCMError.badLength("key", 15)) {
            try AESCCM.seal(
                key: Array(repeating: 0, count: 15), nonce: Array(repeating: 0, count: 13), plaintext: [], tagLength: 4)
        }
        #expect(throws: AESCCMError.badLength("nonce", 14)) {
            try AESCCM.seal(
                key: Array(repeating: 0, count: 16), nonce: Array(repeating: 0, count: 14), plaintext: [], tagLength: 4)
        }
    }
}
