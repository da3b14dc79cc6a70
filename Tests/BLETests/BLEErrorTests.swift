import BLE
import GATT
import Testing

@Suite struct BLEErrorTests {
    @Test func blueZErrorsMapToCodesAndKeepTheirName() {
        let busy = BLEError(bluez: BlueZError(.inProgress, "In Progress"))
        #expect(busy.code == .inProgress)
        #expect(busy.bluezError?.name == .inProgress)
        #expect(BLEError(bluez: BlueZError(.notConnected)).code == .notConnected)
        #expect(
            BLEError(bluez: BlueZError(.notPermitted, "Read not permitted")).code == .notPermitted(.readNotPermitted))
        #expect(
            BLEError(bluez: BlueZError(.notPermitted, "Not paired")).code == .notPermitted(.insufficientAuthentication))
        let coded = BLEError(bluez: BlueZATTErrorMapping.clientError(for: ATTError(0x80)))
        #expect(coded.code == .notPermitted(ATTError(0x80)))
        let other = BLEError(bluez: BlueZError(.failed, "Software caused connection abort"))
        #expect(other.code == .failed)
        #expect(other.description.contains("org.bluez.Error.Failed"))
    }
}
