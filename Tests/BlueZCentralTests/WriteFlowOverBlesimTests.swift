import BLE
import BLETesting
import BlueZ
import DBus
import GATT
import Synchronization
import Testing

/// Flow control for writes without response against blesim's link model: blesim reads
/// an AcquireWrite socket only as fast as the link carries write commands and gives the client's
/// end a send buffer of a few packets, so a faster writer meets a full socket (EAGAIN).
@Suite("write-without-response flow control against blesim's link model", .serialized, .timeLimit(.minutes(1)))
struct WriteFlowOverBlesimTests {
    static let command = BluetoothUUID("12345678-1234-5678-1234-56789abcdef2")!
    static let scenario = """
        { "seed": 11, "adapters": 1, "mtu": 64,
          "devices": [ { "address": "C0:00:00:00:00:0C", "addressType": "random", "intervalMs": 50,
            "advertising": { "name": "HRM-C", "serviceUUIDs": ["180D"] }, "rssi": { "distance": 3 },
            "gatt": { "services": [
              { "uuid": "12345678-1234-5678-1234-56789abcdef0", "characteristics": [
                { "uuid": "12345678-1234-5678-1234-56789abcdef2", "flags": ["read", "write-without-response"],
                  "value": "00" } ] } ] } } ] }
        """

    @Test(
        "a link of 10 write commands a second (100 ms interval, 1 packet per event): writeValueInChunks of 40 chunks sees canSendWriteWithoutResponse false and ready events, takes the link's time, and the device ends with the last chunk"
    )
    func writesWithoutResponseFollowTheLink() async throws {
        try await FaultRig.with(scenario: Self.scenario) { rig in
            let sim = try await BlesimProcess.start(
                address: rig.bus.address, scenario: rig.scenarioPath, options: ["--link", "interval=100,packets=1"])
            defer { sim.stop() }
            let central = try await rig.central()
            let (peripheral, characteristics) = try await FaultRig.connectedHRM(central)
            let command = try #require(characteristics[Self.command])
            #expect(peripheral.maximumWriteValueLength(for: .withoutResponse, characteristic: command) == 61)
            // 40 chunks of 61 bytes, chunk i all i.
            let payload = (0..<40).flatMap { [UInt8](repeating: UInt8($0), count: 61) }

            let readies = Mutex(0)
            let ready = peripheral.readyToSendWriteWithoutResponse()
            let counting = Task {
                for await _ in ready { readies.withLock { $0 += 1 } }
            }
            defer { counting.cancel() }
            let clock = ContinuousClock()
            let start = clock.now
            try await peripheral.writeValueInChunks(payload, for: command)
            let elapsed = clock.now - start

            // blesim keeps at most 6 packets in the socket buffer and one in its reader; the rest go
            // at 10 a second, so the last write cannot be accepted before about 3.3 s.
            #expect(elapsed >= .seconds(2), "\(elapsed)")
            // A ready event is sent only when a full socket drains (canSendWriteWithoutResponse false, then
            // true again): at least one proves the writer met the link's pushback.
            #expect(readies.withLock { $0 } >= 1, "at least one ready event")
            #expect(peripheral.canSendWriteWithoutResponse)

            // Every chunk reaches the device in order: the last one written is its value at the end.
            var last: [UInt8] = []
            let deadline = clock.now + .seconds(20)
            while last != [UInt8](repeating: 39, count: 61), clock.now < deadline {
                last = try await peripheral.readValue(for: command)
            }
            #expect(last == [UInt8](repeating: 39, count: 61))
        }
    }
}
