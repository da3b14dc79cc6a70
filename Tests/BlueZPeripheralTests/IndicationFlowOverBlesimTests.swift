import BLE
import BLETesting
import BlueZ
import DBus
import GATT
import Synchronization
import Testing

/// The transmit-queue flow control for indications against blesim's link model: blesim
/// confirms an application's indications one connection event apart, one outstanding at a time,
/// so BlueZPeripheralBackend's window of unconfirmed indications fills.
@Suite("indication flow control against blesim's link model", .serialized, .timeLimit(.minutes(1)))
struct IndicationFlowOverBlesimTests {
    static let level = LocalCharacteristic(service: .battery, uuid: .batteryLevel)
    static let hci0 = DBusValue.string("hci0")

    @Test(
        "a 100 ms link and a window of 4: 20 indications back to back get updateValue false and readyToUpdate, take the link's time, and the virtual central receives all 20 in order"
    )
    func indicationsFollowTheLink() async throws {
        try await PrivateBus.with { bus in
            let sim = try await BlesimProcess.start(address: bus.address, options: ["--link", "interval=100"])
            defer { sim.stop() }
            let connection = try await bus.connect()
            let backend = try await BlueZPeripheralBackend.start(
                connection: connection, options: .init(transmitQueueLimit: 4))
            let manager = PeripheralManager(backend: backend, options: .init(adapter: "hci0"))
            for await state in manager.stateUpdates() where state == .poweredOn { break }
            try await manager.add(
                GATTService(
                    uuid: .battery,
                    characteristics: [GATTCharacteristic(uuid: .batteryLevel, properties: [.read, .indicate])]))
            let central = try await bus.connect()
            func control(_ member: String, _ arguments: [DBusValue]) async throws -> [DBusValue] {
                try await central.call(
                    destination: "org.bluez", path: try ObjectPath("/org/blesim"), interface: "org.blesim.Control1",
                    member: member, arguments: arguments
                ).arguments()
            }
            let notifications = try await central.signals(
                MatchRule(sender: "org.bluez", interface: "org.blesim.Control1", member: "Notification"),
                buffering: .unbounded)
            var subscriptions = manager.subscriptionEvents().makeAsyncIterator()
            _ = try await control("CentralConnect", [Self.hci0])
            _ = try await control("CentralSubscribe", [Self.hci0, .string("2a19"), .boolean(true)])
            guard case .subscribed? = await subscriptions.next() else {
                Issue.record("no subscription event")
                return
            }

            var ready = manager.readyToUpdate().makeAsyncIterator()
            var refused = 0
            var readies = 0
            let clock = ContinuousClock()
            let start = clock.now
            for value in 0..<20 {
                while !manager.updateValue([UInt8(value)], for: Self.level) {
                    refused += 1
                    guard await ready.next() != nil else {
                        Issue.record("the ready events ended")
                        return
                    }
                    readies += 1
                }
            }
            let elapsed = clock.now - start
            // One confirmation per 100 ms and at most 4 unconfirmed: the 20th update cannot be
            // taken before the 16th confirmation, about 1.6 s in.
            #expect(elapsed >= .seconds(1), "\(elapsed)")
            #expect(refused >= 1, "updateValue returned false at least once")
            #expect(readies >= 1, "at least one readyToUpdate")

            var received: [UInt8] = []
            var signals = notifications.makeAsyncIterator()
            while received.count < 20, let signal = await signals.next() {
                received += try signal.arguments().last?.bytesValue ?? []
            }
            #expect(received == (0..<20).map { UInt8($0) })
            await central.close()
            await backend.shutdown()
            await connection.close()
        }
    }
}
