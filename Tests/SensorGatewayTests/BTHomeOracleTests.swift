import BLE
import BLETesting
import GATT
import Glibc
import JSON
import SensorGateway
import Testing

/// The virtualenv's interpreter (bthome-ble is pinned there); a missing one fails in CI and skips elsewhere.
let oraclePython = BleakVenv.python
let oracleAvailable = BleakVenv.enabled(for: "BTHomeOracleTests")

/// The gateway's BTHome decoding against Home Assistant's own parser, `bthome-ble` (PyPI, pinned), on the same
/// bytes: every packet of ``OracleCorpus`` decoded alone by both must give the same readings (names, values to the
/// last bit, units, events), and each sequence fed to the engine must leave the same state as one bthome-ble parser
/// fed the same packets at the same times (packet-id de-duplication, encryption counters, downgrades).
@Suite struct BTHomeOracleTests {
    typealias Readings = [String: JSON]

    @Test(.enabled(if: oracleAvailable), .timeLimit(.minutes(3)))
    func decodesAsHomeAssistantDoes() async throws {
        guard access(oraclePython, X_OK) == 0 else {
            Issue.record("CI=true and no virtualenv at \(oraclePython): run scripts/bleak-venv.sh's ensure_bleak_venv")
            return
        }
        let corpus = try OracleCorpus.make(seed: 20_260_517)
        let directory = TemporaryDirectory("bthome-oracle")
        defer { directory.remove() }
        let path = directory.path + "/corpus.json"
        try await writeText(JSON.array(corpus.map(\.json)).serialized(.compact), to: path)
        let (output, status) = try await tool([
            "env", "PYTHONDONTWRITEBYTECODE=1", oraclePython,
            BlesimProcess.repositoryRoot + "/Tests/Bleak/bthome_oracle.py", path,
        ])
        try #require(status == 0, "bthome_oracle.py failed:\n\(output)")
        let parsed = try? JSON(parsing: output, options: JSONParseOptions(maxInputBytes: 64 << 20))
        let results = try #require(parsed?.arrayValue, "bthome_oracle.py wrote no JSON array:\n\(output.prefix(2000))")
        try #require(results.count == corpus.count)
        var packets = 0
        var withReadings = 0
        for (index, (testCase, result)) in zip(corpus, results).enumerated() {
            let oracle = try #require(result.arrayValue)
            var config = GatewayConfig()
            config.eventIntervalSeconds = 0
            config.maxReadingsPerDevice = 256
            var engine = GatewayEngine(config: config, keys: testCase.key.map { [testCase.address: $0] } ?? [:])
            for (number, (packet, expected)) in zip(testCase.packets, oracle).enumerated() {
                packets += 1
                let place = "case \(index) packet \(number) (\(hexOf(packet.data)))"
                let mine =
                    (try? BTHomeDecoder.decode(packet.data, address: testCase.address.bytes, key: testCase.key))?
                    .readings ?? []
                if !mine.isEmpty { withReadings += 1 }
                #expect(Self.keyed(mine) == Self.keyed(expected["fresh"]), "\(place): alone")
                _ = engine.ingest(
                    GatewayReport(
                        address: testCase.address, rssi: -60,
                        advertisement: AdvertisementData(serviceData: [.bthome: packet.data])),
                    at: .milliseconds(Int64(packet.time * 1000)))
                let state =
                    engine.table.entry(testCase.address)?.readings.values.map(\.reading).filter { $0.kind != .event }
                    ?? []
                #expect(Self.keyed(state) == Self.keyed(expected["state"]), "\(place): state after the sequence")
            }
        }
        // The corpus must exercise the decoders, not only their refusals.
        #expect(packets > 1000 && withReadings > packets / 2, "\(withReadings) of \(packets) packets gave readings")
    }

    /// The gateway's readings as its control API writes them (GatewayJSON), keyed like the oracle's.
    static func keyed(_ readings: [Reading]) -> Readings {
        keyed(.array(readings.map { GatewayJSON.reading(StoredReading(reading: $0, at: .zero), clock: clock) }))
    }

    static let clock = GatewayClock(unixOrigin: 0)

    /// Readings as JSON (the oracle's, or the gateway's) by kind and name, numbers as doubles (the last of a name
    /// wins, as in both).
    static func keyed(_ json: JSON?) -> Readings {
        var keyed: Readings = [:]
        for item in json?.arrayValue ?? [] {
            var object: JSONObject = ["unit": item["unit"] ?? .null]
            for field in ["value", "steps", "arguments"] {
                guard let value = item[field] else { continue }
                if case .int(let number) = value {
                    object[field] = .double(Double(number))
                } else {
                    object[field] = value
                }
            }
            keyed["\(item["kind"]?.stringValue ?? "")/\(item["name"]?.stringValue ?? "")"] = .object(object)
        }
        return keyed
    }
}
