import BLETesting
import DBus
import Glibc
import Testing

/// Throughput figures, printed and not asserted (run with `DBUS_BENCHMARK=1`).
@Suite("Throughput (prints, does not assert)", .enabled(if: getenv("DBUS_BENCHMARK") != nil))
struct Benchmarks {
    static func rate(_ count: Int, _ elapsed: Duration) -> String {
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return "\(Int(Double(count) / seconds))/s (\(count) in \(elapsed))"
    }

    @Test("PropertiesChanged signals: setProperty on one connection, stream on another")
    func signals() async throws {
        try await PrivateBus.with { bus in
            let emitter = try await bus.connect()
            let receiver = try await bus.connect()
            let characteristic = try ExportedInterface(
                "org.bluez.GattCharacteristic1",
                properties: [ExportedProperty("Value", type: .array(.byte), value: .bytes([]))])
            try emitter.objects.export(Fixture.path, interfaces: [characteristic])
            let stream = try await receiver.signals(.propertiesChanged(), buffering: .unbounded)
            let count = 100_000
            let started = ContinuousClock.now
            let producer = Task {
                for index in 0..<count {
                    let payload = (0..<20).map { UInt8(truncatingIfNeeded: index &+ $0) }
                    try emitter.objects.setProperty(
                        "Value", to: .bytes(payload), interface: "org.bluez.GattCharacteristic1", at: Fixture.path)
                }
                return ContinuousClock.now
            }
            var received = 0
            for await signal in stream {
                let (_, changed, _) = try signal.decode(String.self, [String: DBusValue].self, [String].self)
                if changed["Value"]?.bytesValue?.count == 20 { received += 1 }
                if received == count { break }
            }
            let emitted = try await producer.value
            print(
                "signals: emitted \(Benchmarks.rate(count, started.duration(to: emitted))), received and decoded "
                    + "\(Benchmarks.rate(received, started.duration(to: .now))), dropped \(stream.droppedCount)")
            await emitter.close()
            await receiver.close()
        }
    }

    @Test("method calls: sequential round trips, and 64 in flight")
    func calls() async throws {
        try await PrivateBus.with { bus in
            let server = try await bus.connect()
            let client = try await bus.connect()
            try server.objects.export(Fixture.path, interfaces: [Fixture.testInterface()])
            let destination = server.uniqueName
            let sequential = 10_000
            var started = ContinuousClock.now
            for index in 0..<sequential {
                _ = try await client.call(
                    destination: destination, path: Fixture.path, interface: Fixture.interface,
                    member: "EchoVariant", arguments: [.variant(.int32(Int32(index)))])
            }
            print("calls, sequential: \(Benchmarks.rate(sequential, started.duration(to: .now)))")
            let concurrent = 50_000
            started = .now
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<64 {
                    group.addTask {
                        for index in stride(from: worker, to: concurrent, by: 64) {
                            _ = try await client.call(
                                destination: destination, path: Fixture.path, interface: Fixture.interface,
                                member: "EchoVariant", arguments: [.variant(.int32(Int32(index)))])
                        }
                    }
                }
                try await group.waitForAll()
            }
            print("calls, 64 in flight: \(Benchmarks.rate(concurrent, started.duration(to: .now)))")
            await client.close()
            await server.close()
        }
    }
}
