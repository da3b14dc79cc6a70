import BLETesting
import DBus
import Glibc
import IO
import Testing

@Suite("Every D-Bus type through a real bus")
struct RoundTripTests {
    static let samples: [DBusValue] = [
        .byte(0xFE), .boolean(true), .boolean(false), .int16(-32768), .uint16(65535), .int32(Int32.min),
        .uint32(UInt32.max), .int64(Int64.min), .uint64(UInt64.max), .double(-1.5e300), .string(""),
        .string("héllo ✓ \u{FFFE} 𝄞"), .objectPath(.root), .objectPath(Fixture.path),
        .signature(.empty), .signature(try! DBusSignature("a{sa{sv}}(ybnqiuxtdsogvh)")),
        .bytes([]), .array(.string, []), .array(.array(.int32), [.array(.int32, []), .array(.int32, [.int32(1)])]),
        .dictionary(key: .string, value: .variant, []),
        .dictionary(
            key: .string, value: .dictionary(key: .string, value: .variant),
            [
                (
                    .string("org.bluez.Device1"),
                    .dictionary(key: .string, value: .variant, [(.string("RSSI"), .variant(.int16(-60)))])
                ),
                (.string("empty"), .dictionary(key: .string, value: .variant, [])),
            ]),
        .dictionary(key: .uint64, value: .objectPath, [(.uint64(1), .objectPath(.root))]),
        .structure([.int32(1), .string("two"), .structure([.double(3)])]),
        .array(.structure([.string, .variant]), [.structure([.string("a"), .variant(.uint16(1))])]),
        .variant(.variant(.variant(.string("deep")))),
        .array(.variant, [.variant(.int32(1)), .variant(.bytes([1, 2]))]),
    ]

    @Test(
        "each sample value survives a round trip inside a variant, including empty containers and nested variants",
        arguments: samples.indices)
    func variantEcho(index: Int) async throws {
        try await PrivateBus.with { bus in
            let server = try await bus.connect()
            let client = try await bus.connect()
            try server.objects.export(Fixture.path, interfaces: [Fixture.testInterface()])
            let value = RoundTripTests.samples[index]
            let reply = try await client.call(
                destination: server.uniqueName, path: Fixture.path, interface: Fixture.interface,
                member: "EchoVariant", arguments: [.variant(value)])
            #expect(reply.signature.rawValue == "v")
            #expect(try reply.decode(DBusValue.self) == value)
            await client.close()
            await server.close()
        }
    }

    @Test("all basic types and a 64 KiB byte array as top-level arguments round-trip, the bytes in one block")
    func basicsAndLargeBytes() async throws {
        try await PrivateBus.with { bus in
            let server = try await bus.connect()
            let client = try await bus.connect()
            try server.objects.export(Fixture.path, interfaces: [Fixture.testInterface()])
            let large = (0..<65_536).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            let arguments: [DBusValue] = [
                .byte(1), .boolean(true), .int16(-2), .uint16(3), .int32(-4), .uint32(5), .int64(-6), .uint64(7),
                .double(8.5), .string("nine"), .objectPath(Fixture.path), .signature(try DBusSignature("a{sv}")),
                .bytes(large),
            ]
            let reply = try await client.call(
                destination: server.uniqueName, path: Fixture.path, interface: Fixture.interface, member: "EchoMany",
                arguments: arguments)
            #expect(reply.signature.rawValue == "ybnqiuxtdsogay")
            let values = try reply.arguments()
            #expect(values == arguments)
            guard case .bytes(let bytes) = values.last else {
                Issue.record("ay did not decode to .bytes")
                return
            }
            #expect(bytes == large)
            #expect(try values.last?.decode([UInt8].self) == large)
            await client.close()
            await server.close()
        }
    }

    @Test("a Unix file descriptor is passed: the server reads what the client writes into a pipe")
    func fileDescriptor() async throws {
        try await PrivateBus.with { bus in
            let server = try await bus.connect()
            let client = try await bus.connect()
            #expect(client.canPassUnixFDs)
            try server.objects.export(Fixture.path, interfaces: [Fixture.testInterface()])
            let (pipeRead, pipeWrite) = try FileDescriptor.pipe()
            let readEnd = UnixFD(owning: pipeRead.rawValue)
            let message = Array("through the pipe".utf8)
            #expect(write(pipeWrite.rawValue, message, message.count) == message.count)
            pipeWrite.close()
            let reply = try await client.call(
                destination: server.uniqueName, path: Fixture.path, interface: Fixture.interface, member: "ReadFD",
                arguments: [.unixFD(readEnd)])
            #expect(try reply.decode([UInt8].self) == message)
            #expect(readEnd.rawValue != nil)  // sending duplicated it: ours is still open
            readEnd.close()
            #expect(readEnd.rawValue == nil)
            await client.close()
            await server.close()
        }
    }

    @Test("a reply whose body differs from what the caller decodes is a thrown DBusMarshalError")
    func decodeMismatch() async throws {
        try await PrivateBus.with { bus in
            let server = try await bus.connect()
            let client = try await bus.connect()
            try server.objects.export(Fixture.path, interfaces: [Fixture.testInterface()])
            let reply = try await client.call(
                destination: server.uniqueName, path: Fixture.path, interface: Fixture.interface, member: "Sender")
            #expect(throws: DBusMarshalError.typeMismatch(expected: "u", actual: "s")) { try reply.decode(UInt32.self) }
            #expect(throws: DBusMarshalError.argumentCount(expected: 2, actual: 1)) {
                try reply.decode(String.self, String.self)
            }
            await client.close()
            await server.close()
        }
    }
}
