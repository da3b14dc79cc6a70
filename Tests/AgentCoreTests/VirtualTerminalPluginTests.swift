import AgentCore
import BLE
import BLETesting
import GATT
import Glibc
import JSON
import PaymentTerminalProfile
import RoleKit
import Testing

/// libVirtualPaymentTerminal.so loaded as the agent loads it, over a
/// scripted peripheral backend: the profile's services and advertisement,
/// Payment Request and Status Query writes answered with indications, and
/// idempotency records kept across a restart.
@Suite("virtual payment terminal plugin", .serialized, .timeLimit(.minutes(1)))
struct VirtualTerminalPluginTests {
    let lane = PeripheralIdentifier(adapter: "00:11:22:33:44:55", address: "66:55:44:33:22:11", addressType: .random)
    let request = LocalCharacteristic(
        service: PaymentTerminalProfile.serviceUUID, uuid: PaymentTerminalProfile.paymentRequestUUID)
    let query = LocalCharacteristic(
        service: PaymentTerminalProfile.serviceUUID, uuid: PaymentTerminalProfile.statusQueryUUID)
    let status = LocalCharacteristic(
        service: PaymentTerminalProfile.serviceUUID, uuid: PaymentTerminalProfile.transactionStatusUUID)

    func start(
        _ directory: String, manager: PeripheralManager, host: RecordingPluginHost
    ) async throws -> any RolePlugin {
        let descriptor = try PluginLoader().load(
            name: "VirtualPaymentTerminal", role: .peripheral, from: buildDirectory)
        let plugin = try descriptor.factory(
            RoleContext(
                role: .peripheral, config: ["name": "VT-Lane", "latencyMs": 0], logger: PluginLogger { _, _ in },
                state: PluginStateStore(directory: directory), methods: host, events: host,
                manager: .peripheral(manager)))
        try await plugin.start()
        return plugin
    }

    func write(
        _ id: UInt64, _ value: [UInt8], to characteristic: LocalCharacteristic, backend: FakePeripheralBackend,
        calls: inout AsyncStream<FakePeripheralBackend.Call>.Iterator
    ) async -> (answer: FakePeripheralBackend.Call?, indicated: TransactionStatus?) {
        backend.send(
            .request(
                ATTRequestInfo(
                    id: ATTRequestID(id), central: lane, characteristic: characteristic, value: value,
                    write: .withResponse)))
        let answer = await calls.next { if case .respond(ATTRequestID(id), _) = $0 { true } else { false } }
        let update = await calls.next { if case .update(_, status, _) = $0 { true } else { false } }
        guard case .update(let bytes, _, _) = update else { return (answer, nil) }
        return (answer, try? TransactionStatus(decoding: bytes))
    }

    @Test("a Payment Request is approved and indicated; a retry is idempotent; the record survives a restart")
    func paymentRoundTrip() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let id = try TransactionID(bytes: Array(1...16))
        let payment = try PaymentRequest(
            transactionID: id, amount: 1250, currency: CurrencyCode("EUR"), reference: "A-1")
        do {
            let (manager, backend) = await FakePeripheralBackend.poweredOn()
            var calls = backend.calls.makeAsyncIterator()
            let host = RecordingPluginHost(namespace: "terminal")
            let plugin = try await start(directory.path, manager: manager, host: host)
            let advertised = await calls.next { if case .registerAdvertisement = $0 { true } else { false } }
            guard case .registerAdvertisement(let data, _) = advertised else { throw Fail("not advertised") }
            #expect(data.serviceUUIDs.contains(PaymentTerminalProfile.serviceUUID))
            #expect(manager.services.map(\.uuid).contains(PaymentTerminalProfile.serviceUUID))

            let first = await write(1, payment.encoded(), to: request, backend: backend, calls: &calls)
            #expect(first.answer == .respond(ATTRequestID(1), .success([])))
            #expect(first.indicated?.transactionID == id)
            #expect(first.indicated?.state == .approved)
            let retry = await write(2, payment.encoded(), to: request, backend: backend, calls: &calls)
            #expect(retry.indicated == first.indicated, "the same status, not a second charge")
            let handler = try #require(host.handler("terminal.status"))
            let report = try await handler(
                PluginCall(method: "terminal.status", params: nil, callerUid: 0, callerPid: 1))
            #expect(report["charges"]?.intValue == 1)
            // A request in another format version is refused with the profile's ATT error (0x80).
            backend.send(
                .request(
                    ATTRequestInfo(
                        id: ATTRequestID(3), central: lane, characteristic: request, value: [0x09],
                        write: .withResponse)))
            let refused = await calls.next { if case .respond(ATTRequestID(3), _) = $0 { true } else { false } }
            #expect(refused == .respond(ATTRequestID(3), .failure(PaymentTerminalATTError.unsupportedVersion)))
            await plugin.stop()
        }
        let (manager, backend) = await FakePeripheralBackend.poweredOn()
        var calls = backend.calls.makeAsyncIterator()
        let host = RecordingPluginHost(namespace: "terminal")
        let plugin = try await start(directory.path, manager: manager, host: host)
        let asked = await write(
            4, StatusQuery(transactionID: id).encoded(), to: query, backend: backend, calls: &calls)
        #expect(asked.indicated?.state == .approved, "the restarted terminal remembers the transaction")
        await plugin.stop()
    }
}
