import BLETesting
import DBus
import Testing

@Suite("org.freedesktop.DBus.Properties on exported objects")
struct PropertiesTests {
    static let interface = "org.bleagent.Device"

    static func device(refuseSetter: Bool = false) throws -> ExportedInterface {
        try ExportedInterface(
            interface,
            properties: [
                ExportedProperty("Name", type: .string, value: "sensor"),
                ExportedProperty("Alias", type: .string, access: .readWrite, value: "kitchen") { value, _ in
                    if refuseSetter, value == "forbidden" { throw DBusError("org.bluez.Error.NotPermitted", "no") }
                },
                ExportedProperty("Secret", type: .uint32, access: .write, value: .uint32(7)),
                ExportedProperty("RSSI", type: .int16),
                ExportedProperty("Battery", type: .byte, value: .byte(90), changeSignal: .invalidates),
                ExportedProperty("Value", type: .array(.byte), value: .bytes([1, 2])),
            ])
    }

    func call(
        _ client: DBusConnection, _ server: DBusConnection, _ member: String, _ arguments: [DBusValue]
    )
        async throws -> DBusMessage
    {
        try await client.call(
            destination: server.uniqueName, path: Fixture.path, interface: "org.freedesktop.DBus.Properties",
            member: member, arguments: arguments)
    }

    func errorName(_ body: () async throws -> DBusMessage) async -> DBusError.Name? {
        do {
            _ = try await body()
            return nil
        } catch {
            return (error as? DBusError)?.name
        }
    }

    @Test("Get and GetAll return readable, present values; absent and write-only ones are left out or refused")
    func getAndGetAll() async throws {
        try await PrivateBus.with { bus in
            let server = try await bus.connect()
            let client = try await bus.connect()
            try server.objects.export(Fixture.path, interfaces: [PropertiesTests.device()])
            let name = try await call(client, server, "Get", [.string(PropertiesTests.interface), "Name"])
            #expect(try name.decode(DBusValue.self) == "sensor")
            let all = try await call(client, server, "GetAll", [.string(PropertiesTests.interface)])
                .decode([String: DBusValue].self)
            #expect(Set(all.keys) == ["Name", "Alias", "Battery", "Value"])
            #expect(all["Value"]?.bytesValue == [1, 2])
            let i = DBusValue.string(PropertiesTests.interface)
            #expect(await errorName { try await call(client, server, "Get", [i, "Secret"]) } == .accessDenied)
            #expect(await errorName { try await call(client, server, "Get", [i, "RSSI"]) } == .unknownProperty)
            #expect(await errorName { try await call(client, server, "Get", [i, "Nope"]) } == .unknownProperty)
            #expect(await errorName { try await call(client, server, "GetAll", ["org.x.Nope"]) } == .unknownInterface)
            #expect(await errorName { try await call(client, server, "Get", [i]) } == .invalidArgs)
            await client.close()
            await server.close()
        }
    }

    @Test("Set checks access, type and the setter, stores the value and emits PropertiesChanged")
    func set() async throws {
        try await PrivateBus.with { bus in
            let server = try await bus.connect()
            let client = try await bus.connect()
            try server.objects.export(Fixture.path, interfaces: [PropertiesTests.device(refuseSetter: true)])
            let changes = try await client.signals(.propertiesChanged(sender: server.uniqueName))
            let i = DBusValue.string(PropertiesTests.interface)
            #expect(
                await errorName { try await call(client, server, "Set", [i, "Name", .variant("x")]) }
                    == .propertyReadOnly)
            #expect(
                await errorName { try await call(client, server, "Set", [i, "Alias", .variant(.int32(1))]) }
                    == .invalidArgs)
            #expect(
                await errorName { try await call(client, server, "Set", [i, "Alias", .variant("forbidden")]) }
                    == "org.bluez.Error.NotPermitted")
            _ = try await call(client, server, "Set", [i, "Alias", .variant("hall")])
            #expect(server.objects.property("Alias", interface: PropertiesTests.interface, at: Fixture.path) == "hall")
            var iterator = changes.makeAsyncIterator()
            let signal = try #require(await iterator.next())
            let (interface, changed, invalidated) = try signal.decode(
                String.self, [String: DBusValue].self, [String].self)
            #expect(interface == PropertiesTests.interface && changed == ["Alias": "hall"] && invalidated.isEmpty)
            await client.close()
            await server.close()
        }
    }

    @Test("local property updates emit PropertiesChanged with values, invalidations and removals, in order")
    func localUpdates() async throws {
        try await PrivateBus.with { bus in
            let server = try await bus.connect()
            let client = try await bus.connect()
            try server.objects.export(Fixture.path, interfaces: [PropertiesTests.device()])
            let changes = try await client.signals(.propertiesChanged(pathNamespace: Fixture.path))
            let objects = server.objects
            let i = PropertiesTests.interface
            try objects.setProperties([("RSSI", .int16(-40)), ("Battery", .byte(80))], interface: i, at: Fixture.path)
            try objects.setProperty("RSSI", to: nil, interface: i, at: Fixture.path)
            for byte in UInt8(0)..<20 {
                try objects.setProperty("Value", to: .bytes([byte]), interface: i, at: Fixture.path)
            }
            #expect(throws: DBusMarshalError.self) {
                try objects.setProperty("RSSI", to: .string("loud"), interface: i, at: Fixture.path)
            }
            #expect(throws: DBusError.self) { try objects.setProperty("Nope", to: "x", interface: i, at: Fixture.path) }
            var iterator = changes.makeAsyncIterator()
            func next() async throws -> ([String: DBusValue], [String]) {
                let signal = try #require(await iterator.next())
                let (_, changed, invalidated) = try signal.decode(String.self, [String: DBusValue].self, [String].self)
                return (changed, invalidated)
            }
            let first = try await next()
            #expect(first.0 == ["RSSI": .int16(-40)] && first.1 == ["Battery"])
            let second = try await next()
            #expect(second.0.isEmpty && second.1 == ["RSSI"])
            for byte in UInt8(0)..<20 { #expect(try await next().0["Value"]?.bytesValue == [byte]) }
            await client.close()
            await server.close()
        }
    }

    @Test("an authorizer refuses other callers with AccessDenied, on every interface")
    func authorizer() async throws {
        try await PrivateBus.with { bus in
            let server = try await bus.connect()
            let allowed = try await bus.connect()
            let other = try await bus.connect()
            let allowedName = allowed.uniqueName
            try server.objects.export(
                Fixture.path, interfaces: [Fixture.testInterface(), PropertiesTests.device()],
                authorize: { $0 == allowedName })
            let ok = try await allowed.call(
                destination: server.uniqueName, path: Fixture.path, interface: Fixture.interface, member: "Sender")
            #expect(try ok.decode(String.self) == allowedName)
            #expect(
                await errorName {
                    try await other.call(
                        destination: server.uniqueName, path: Fixture.path, interface: Fixture.interface,
                        member: "Sender")
                } == .accessDenied)
            #expect(
                await errorName { try await call(other, server, "GetAll", [.string(PropertiesTests.interface)]) }
                    == .accessDenied)
            for connection in [server, allowed, other] { await connection.close() }
        }
    }
}
