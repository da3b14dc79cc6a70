import GATT
import PaymentTerminalProfile
import Testing

@Suite struct ProfileCodecTests {
    @Test func uuidsDeriveFromTheProfileBase() {
        #expect(PaymentTerminalProfile.serviceUUID.uuidString == "ad580001-3600-4cd1-87f0-6e799e31fc68")
        #expect(PaymentTerminalProfile.terminalInfoUUID.uuidString == "ad580002-3600-4cd1-87f0-6e799e31fc68")
        #expect(PaymentTerminalProfile.paymentRequestUUID.uuidString == "ad580003-3600-4cd1-87f0-6e799e31fc68")
        #expect(PaymentTerminalProfile.transactionStatusUUID.uuidString == "ad580004-3600-4cd1-87f0-6e799e31fc68")
        #expect(PaymentTerminalProfile.statusQueryUUID.uuidString == "ad580005-3600-4cd1-87f0-6e799e31fc68")
    }

    @Test func serviceDefinitionHasTheDocumentedProperties() throws {
        let service = PaymentTerminalProfile.serviceDefinition
        #expect(service.uuid == PaymentTerminalProfile.serviceUUID && service.isPrimary)
        #expect(service.characteristics.map(\.uuid) == (2...5).map { PaymentTerminalProfile.uuid(index: $0) })
        #expect(service.characteristic(PaymentTerminalProfile.terminalInfoUUID)?.properties == [.read])
        #expect(service.characteristic(PaymentTerminalProfile.paymentRequestUUID)?.properties == [.write])
        #expect(service.characteristic(PaymentTerminalProfile.transactionStatusUUID)?.properties == [.indicate])
        #expect(
            service.characteristic(PaymentTerminalProfile.statusQueryUUID)?.properties == [
                .write, .writeWithoutResponse,
            ])
        let info = try TerminalInfo(terminalID: "T1", vendor: "ACME", model: "P1", firmware: "2.0", capabilities: [])
        let all = PaymentTerminalProfile.services(for: info)
        #expect(all.map(\.uuid) == [PaymentTerminalProfile.serviceUUID, .deviceInformation, .battery])
        #expect(all[1].characteristic(.serialNumberString)?.value == Array("T1".utf8))
        #expect(PaymentTerminalProfile.minimumATTMTU == 28)
    }

    @Test func theAdvertisementFitsLegacyLimitsWithTheLongestName() throws {
        let name = String(repeating: "N", count: 29)
        let (advertising, scanResponse) = try PaymentTerminalProfile.advertisement(localName: name)
        #expect(try advertising.encode(limit: .legacy).count == 21)
        #expect(try scanResponse.encode(limit: .legacy).count == 31)
        #expect(PaymentTerminalProfile.announcesTerminal(advertising))
        #expect(!PaymentTerminalProfile.announcesTerminal(scanResponse))
        #expect(throws: PaymentTerminalValueError.self) {
            try PaymentTerminalProfile.advertisement(localName: name + "N")
        }
        #expect(throws: PaymentTerminalValueError.self) { try PaymentTerminalProfile.advertisement(localName: "") }
    }

    @Test func paymentRequestFixture() throws {
        let bytes = hex("01 \(idHex) e204000000000000 455552 06 4f52442d3432")
        #expect(euro(1250, "ORD-42").encoded() == bytes)
        #expect(try PaymentRequest(decoding: bytes) == euro(1250, "ORD-42"))
        #expect(bytes.count == 35)
        let longest = euro(PaymentRequest.maximumAmount, String(repeating: "r", count: 64))
        #expect(longest.encoded().count == PaymentRequest.maximumSize)
        #expect(PaymentRequest.maximumSize == 93)
        #expect(try PaymentRequest(decoding: longest.encoded()) == longest)
    }

    @Test func transactionStatusFixtures() throws {
        let approved = hex("01 \(idHex) 02 00 413030303031")
        let status = try TransactionStatus(
            transactionID: fixtureID, state: .approved, reason: .none, authorizationCode: "A00001")
        #expect(status.encoded() == approved)
        #expect(try TransactionStatus(decoding: approved) == status)
        let declined = hex("01 \(idHex) 03 02 000000000000")
        let decline = TransactionStatus(transactionID: fixtureID, state: .declined, reason: .amountLimit)
        #expect(decline.encoded() == declined)
        #expect(try TransactionStatus(decoding: declined) == decline)
        let unnamedReason = hex("01 \(idHex) 05 7f 000000000000")
        #expect(try TransactionStatus(decoding: unnamedReason).reason.rawValue == 0x7F)
        #expect(try TransactionStatus(decoding: unnamedReason).encoded() == unnamedReason)
    }

    @Test func statusQueryAndTerminalInfoFixtures() throws {
        #expect(StatusQuery(transactionID: fixtureID).encoded() == hex("01 \(idHex)"))
        #expect(try StatusQuery(decoding: hex("01 \(idHex)")).transactionID == fixtureID)
        let bytes = hex("01 0b00 02 5431 04 41434d45 02 5031 03 322e30")
        let info = try TerminalInfo(
            terminalID: "T1", vendor: "ACME", model: "P1", firmware: "2.0",
            capabilities: [.contactless, .chip, .pinEntry])
        #expect(info.encoded() == bytes)
        #expect(try TerminalInfo(decoding: bytes) == info)
        let futureBits = hex("01 0b80 02 5431 00 00 00")
        #expect(try TerminalInfo(decoding: futureBits).capabilities.rawValue == 0x800B)
    }

    @Test func everyTruncationIsATypedError() {
        let cases: [([UInt8], ([UInt8]) -> PaymentTerminalDecodingError?)] = [
            (euro(1250, "ORD-42").encoded(), { failure(PaymentRequest.init(decoding:), $0) }),
            (hex("01 \(idHex) 02 00 413030303031"), { failure(TransactionStatus.init(decoding:), $0) }),
            (hex("01 \(idHex)"), { failure(StatusQuery.init(decoding:), $0) }),
            (hex("01 0b00 02 5431 04 41434d45 02 5031 03 322e30"), { failure(TerminalInfo.init(decoding:), $0) }),
        ]
        for (value, decode) in cases {
            #expect(decode(value) == nil)
            for length in 0..<value.count {
                #expect(decode(Array(value.prefix(length))) != nil, "prefix \(length) of \(value.count)")
            }
        }
    }

    @Test func malformedValuesNameTheirProblem() {
        let request = euro(1250, "ORD-42").encoded()
        #expect(failure(PaymentRequest.init(decoding:), []) == .empty(format: .paymentRequest))
        #expect(
            failure(PaymentRequest.init(decoding:), [2] + request.dropFirst())
                == .unsupportedVersion(format: .paymentRequest, version: 2))
        #expect(
            failure(PaymentRequest.init(decoding:), request + [0]) == .trailingBytes(format: .paymentRequest, count: 1))
        #expect(
            failure(PaymentRequest.init(decoding:), request + [UInt8](repeating: 0, count: 100))
                == .oversized(format: .paymentRequest, size: 135, maximum: 93))
        var zeroAmount = request
        for index in 17..<25 { zeroAmount[index] = 0 }
        #expect(failure(PaymentRequest.init(decoding:), zeroAmount)?.description.contains("amount") == true)
        var lowercase = request
        lowercase[25] = UInt8(ascii: "e")
        #expect(failure(PaymentRequest.init(decoding:), lowercase)?.description.contains("currency") == true)
        var badUTF8 = request
        badUTF8[29] = 0xFF
        #expect(failure(PaymentRequest.init(decoding:), badUTF8)?.description.contains("UTF-8") == true)
        let tooLongReference = Array(request.prefix(28)) + [65] + [UInt8](repeating: 0x41, count: 65)
        #expect(
            failure(PaymentRequest.init(decoding:), tooLongReference)
                == .oversized(format: .paymentRequest, size: 94, maximum: 93))
        let claimsLong = Array(request.prefix(28)) + [65] + [UInt8](repeating: 0x41, count: 10)
        #expect(
            failure(PaymentRequest.init(decoding:), claimsLong)
                == .fieldTooLong(format: .paymentRequest, field: "reference", length: 65, maximum: 64))
        #expect(failure(TransactionStatus.init(decoding:), hex("01 \(idHex) 09 00 000000000000")) != nil)
        #expect(failure(TransactionStatus.init(decoding:), hex("01 \(idHex) 02 00 613030303031")) != nil)
        #expect(failure(TransactionStatus.init(decoding:), hex("01 \(idHex) 02 00 410030303031")) != nil)
        #expect(failure(TerminalInfo.init(decoding:), hex("01 0000 00 00 00 00")) != nil)
    }

    @Test func randomBytesNeverTrapAndDecodedValuesRoundTrip() {
        var generator = SplitMix(seed: 7)
        for _ in 0..<20_000 {
            let length = Int.random(in: 0...140, using: &generator)
            var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if !bytes.isEmpty && Bool.random(using: &generator) { bytes[0] = 1 }
            if let request = try? PaymentRequest(decoding: bytes) { #expect(request.encoded() == bytes) }
            if let status = try? TransactionStatus(decoding: bytes) { #expect(status.encoded() == bytes) }
            if let info = try? TerminalInfo(decoding: bytes) { #expect(info.encoded() == bytes) }
            if let query = try? StatusQuery(decoding: bytes) { #expect(query.encoded() == bytes) }
        }
    }

    @Test func valuesRefuseOutOfRangeFields() {
        #expect(throws: PaymentTerminalValueError.self) { try CurrencyCode("eur") }
        #expect(throws: PaymentTerminalValueError.self) { try CurrencyCode("EURO") }
        #expect(throws: PaymentTerminalValueError.self) {
            try PaymentRequest(transactionID: fixtureID, amount: 0, currency: CurrencyCode("EUR"), reference: "")
        }
        #expect(throws: PaymentTerminalValueError.self) {
            try TransactionStatus(
                transactionID: fixtureID, state: .approved, reason: .none, authorizationCode: "TOOLONG")
        }
        #expect(throws: PaymentTerminalValueError.self) { try TransactionID(parsing: "not-a-uuid") }
        #expect(throws: PaymentTerminalValueError.self) { try TransactionID(bytes: [1, 2, 3]) }
        #expect((try? TransactionID(parsing: "00112233445566778899AABBCCDDEEFF")) == fixtureID)
        #expect(fixtureID.uuidString == "00112233-4455-6677-8899-aabbccddeeff")
    }
}

/// A small deterministic generator (SplitMix64) for seeded tests.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The error decoding `bytes` throws, or nil if it decodes.
func failure<T>(
    _ decode: ([UInt8]) throws(PaymentTerminalDecodingError) -> T, _ bytes: [UInt8]
)
    -> PaymentTerminalDecodingError?
{
    do {
        _ = try decode(bytes)
        return nil
    } catch {
        return error
    }
}
