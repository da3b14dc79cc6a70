import BLE
import GATT
import JSON
import PaymentTerminalProfile
import PaymentTerminalScanner

/// The payment lane's journal as the scanner reads it back at start: any
/// bytes a crash, a full disk or an operator may leave in the file. Each
/// input is read twice: as it is, and with a valid checksum put in front of
/// every line, so the records' JSON is reached past the checksums.
///
/// Checks: the good prefix and the torn tail add up to the file; every
/// record read writes a line that reads back as the same record.
enum PaymentJournalTarget {
    static let target = FuzzTarget(
        name: "payment-journal", summary: "the payment scanner's journal file, with and without valid checksums",
        seeds: { seeds() }, body: run)

    static func run(_ input: [UInt8]) throws(FuzzFinding) {
        try read(input)
        let lines = input.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        let checksummed = lines.map { Array(crc32(Array($0)).utf8) + [UInt8(ascii: " ")] + $0 }
        try read(Array(checksummed.joined(separator: [UInt8(ascii: "\n")])))
    }

    private static func read(_ bytes: [UInt8]) throws(FuzzFinding) {
        guard let contents = try? JournalContents.decode(bytes, path: "journal") else { return }
        try require(
            contents.validLength + contents.tornBytes == bytes.count && contents.validLength >= 0
                && contents.tornBytes >= 0,
            "\(bytes.count) bytes read as \(contents.validLength) good and \(contents.tornBytes) torn")
        for record in contents.records {
            let line = record.line
            try require(line.last == UInt8(ascii: "\n"), "record \(record) writes \(line) without a newline")
            let again = JournalRecord(line: line.dropLast())
            try require(
                again == record, "record \(record) writes \(line), which reads back as \(String(describing: again))")
        }
        _ = JournalState(replaying: contents.records)
    }

    /// CRC-32 (IEEE 802.3, reflected) in eight lowercase hex digits, as the
    /// journal's lines start.
    static func crc32(_ bytes: [UInt8]) -> String {
        let crc = bytes.reduce(UInt32.max) { crc, byte in
            (0..<8).reduce(crc ^ UInt32(byte)) { c, _ in c >> 1 ^ (c & 1 == 0 ? 0 : 0xEDB8_8320) }
        }
        let digits = String(~crc, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }

    /// A journal the scanner's tests write: one payment through every phase.
    static func seeds() -> [[UInt8]] {
        let id = try! TransactionID(parsing: "00112233-4455-6677-8899-aabbccddeeff")
        let request = try! PaymentRequest(
            transactionID: id, amount: 1250, currency: try! CurrencyCode("EUR"), reference: "order-42")
        let records: [JournalRecord] = [
            .accepted(request, terminal: "T-0001", atMilliseconds: 1_700_000_000_000), .sent(id, attempt: 1),
            .reconciling(id, why: "link lost"),
            .final(try! TransactionStatus(transactionID: id, state: .approved, reason: .none, authorizationCode: "A1")),
        ]
        let journal = records.flatMap(\.line)
        return [
            journal, journal + Array(records[1].line.prefix(20)),
            records.map { Array($0.json.serialized().utf8) }.joined(separator: [0x0A]).map { $0 },
        ]
    }
}

/// The state restoration file (`<stateDirectory>/<identifier>.json`) the
/// BLE managers read back after a restart.
///
/// Checks: a state read from the file, written and read again, is stable
/// from then on.
enum RestorationStateTarget {
    static let target = FuzzTarget(
        name: "restoration-state", summary: "the BLE managers' state restoration file", seeds: { seeds() },
        body: run)

    static func run(_ input: [UInt8]) throws(FuzzFinding) {
        guard let json = try? JSON(parsing: input), let state = try? RestorationState(json: json) else { return }
        let once: RestorationState
        do {
            once = try RestorationState(json: state.json)
        } catch {
            throw FuzzFinding("\(state), read from \(json), writes \(state.json), which is refused: \(error)")
        }
        let twice = try? RestorationState(json: once.json)
        try require(twice == once, "\(once) writes \(once.json), which reads back as \(String(describing: twice))")
    }

    /// A central's state and a peripheral's, as the managers write them.
    static func seeds() -> [[UInt8]] {
        let heartRate = PeripheralIdentifier(adapter: "hci0", address: "AA:BB:CC:DD:EE:FF", addressType: .random)
        let terminal = PeripheralIdentifier(adapter: "hci0", address: "00:1B:DC:00:00:01", addressType: .public)
        let central = RestorationState(
            knownPeripherals: [
                .init(identifier: heartRate, adapter: "hci0", address: "AA:BB:CC:DD:EE:FF", addressType: .random),
                .init(
                    identifier: terminal, adapter: "hci0", address: "00:1B:DC:00:00:01", addressType: .public, name: "T"
                ),
            ],
            desiredConnections: [terminal],
            subscriptions: [
                CharacteristicReference(
                    peripheral: heartRate, service: .heartRate, characteristic: .heartRateMeasurement)
            ])
        let peripheral = RestorationState(
            services: [
                GATTService(
                    uuid: .battery,
                    characteristics: [
                        GATTCharacteristic(uuid: .batteryLevel, properties: [.read, .notify], value: [99])
                    ])
            ],
            advertising: AdvertisingData(serviceUUIDs: [.battery], localName: "bat"))
        return [central, peripheral].map { Array($0.json.serialized(.pretty).utf8) } + [
            Array(#"{"version": 1, "knownPeripherals": ["#.utf8)
        ]
    }
}
