import GATT
import Testing

@Suite struct ATTMTUTests {
    @Test func theDefaultMTUCarries20BytesPerWriteOrNotification() {
        let mtu = ATTMTU.minimum
        #expect(mtu.value == 23)
        #expect(mtu.maximumWritePayload == 20)
        #expect(mtu.maximumNotificationPayload == 20)
        #expect(mtu.maximumReadPayload == 22)
        #expect(mtu.maximumPreparedWritePayload == 18)
    }

    @Test func theLargestMTUCarriesAWhole512ByteValueInOnePreparedWrite() {
        let mtu = ATTMTU.maximum
        #expect(mtu.value == 517)
        #expect(mtu.maximumWritePayload == 514)
        #expect(mtu.maximumReadPayload == 516)
        #expect(mtu.maximumPreparedWritePayload == ATTMTU.maximumAttributeValueLength)
        #expect(ATTMTU.maximumAttributeValueLength == 512)
    }

    @Test(arguments: [
        (0, 23), (-5, 23), (22, 23), (23, 23), (185, 185), (247, 247), (517, 517), (518, 517), (100_000, 517),
    ])
    func valuesFromOutsideAreClampedTo23Through517(given: Int, clamped: Int) {
        #expect(ATTMTU(clamping: given).value == clamped)
    }

    @Test func aUInt16FromBlueZIsClampedToo() {
        #expect(ATTMTU(clamping: UInt16.max).value == 517)
        #expect(ATTMTU(clamping: UInt16(247)).maximumWritePayload == 244)
    }

    @Test func anEmptyPayloadGivesNoChunks() {
        #expect(ATTMTU.minimum.writeWithoutResponseChunks(of: []).isEmpty)
    }

    @Test func anExactMultipleSplitsIntoFullChunksOnly() {
        let payload = (0..<40).map { UInt8($0) }
        let chunks = ATTMTU.minimum.writeWithoutResponseChunks(of: payload)
        #expect(chunks.map(\.count) == [20, 20])
        #expect(chunks.flatMap { $0 } == payload)
    }

    @Test func aRemainderGoesInAShorterLastChunk() {
        let payload = (0..<41).map { UInt8($0) }
        let chunks = ATTMTU.minimum.writeWithoutResponseChunks(of: payload)
        #expect(chunks.map(\.count) == [20, 20, 1])
        #expect(chunks.flatMap { $0 } == payload)
        #expect(ATTMTU.minimum.writeWithoutResponseChunks(of: [7]) == [[7]])
        #expect(
            ATTMTU(clamping: 247).writeWithoutResponseChunks(of: Array(repeating: 1, count: 500)).map(\.count) == [
                244, 244, 12,
            ])
    }
}
