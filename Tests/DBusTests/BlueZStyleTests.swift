import BLETesting
import DBus
import Testing

/// The `.bluez` style answers as bluetoothd (gdbus on libdbus) does; the texts are those recorded from bluetoothd
/// 5.66 in Tests/Conformance/bluez-5.66.json.
@Suite("ObjectServer.Style.bluez: gdbus errors and introspection")
struct BlueZStyleTests {
    static let interface = "org.bluez.Adapter1"

    static func adapter() throws -> ExportedInterface {
        try ExportedInterface(
            interface,
            methods: [
                ExportedMethod("StartDiscovery", in: "", out: "") { _ in [] },
                ExportedMethod(
                    "SetDiscoveryFilter",
                    inputs: [DBusArgument("properties", .dictionary(key: .string, value: .variant))]
                ) { _ in [] },
            ],
            properties: [
                ExportedProperty("Address", type: .string, value: "00:00:00:00:00:00"),
                ExportedProperty("Powered", type: .boolean, access: .readWrite, value: false),
                ExportedProperty("Alias", type: .string, access: .readWrite, value: "a"),
            ])
    }

    static func agentManager() throws -> ExportedInterface {
        try ExportedInterface(
            "org.bluez.AgentManager1", methods: [ExportedMethod("RegisterAgent", in: "os", out: "") { _ in [] }])
    }

    func outcome(
        _ client: DBusConnection, _ server: DBusConnection, path: ObjectPath = Fixture.path, _ interface: String?,
        _ member: String, _ arguments: [DBusValue] = []
    ) async -> String {
        do {
            _ = try await client.call(
                destination: server.uniqueName, path: path, interface: interface, member: member,
                arguments: arguments)
            return "ok"
        } catch let error as DBusError {
            return "\(error.name) \(error.message)"
        } catch {
            return "\(error)"
        }
    }

    @Test("Properties, unknown methods, wrong signatures and unknown objects get gdbus's and libdbus's errors")
    func errors() async throws {
        try await PrivateBus.with { bus in
            let server = try await bus.connect()
            let client = try await bus.connect()
            server.objects.style = .bluez
            try server.objects.export(Fixture.path, interfaces: [BlueZStyleTests.adapter()])
            let p = "org.freedesktop.DBus.Properties"
            let i = DBusValue.string(BlueZStyleTests.interface)
            let e = "org.freedesktop.DBus.Error."
            let cases: [(String, String?, String, [DBusValue], String)] = [
                ("get unknown", p, "Get", [i, "Nope"], e + "InvalidArgs No such property 'Nope'"),
                (
                    "getall unknown", p, "GetAll", ["org.bluez.Nope1"],
                    e + "InvalidArgs No such interface 'org.bluez.Nope1'"
                ),
                ("set unknown", p, "Set", [i, "Nope", .variant(true)], e + "UnknownProperty No such property 'Nope'"),
                (
                    "set read-only", p, "Set", [i, "Address", .variant("x")],
                    e + "PropertyReadOnly Property 'Address' is not writable"
                ),
                (
                    "set wrong type", p, "Set", [i, "Powered", .variant("yes")],
                    e + "InvalidSignature Invalid signature for 'Powered'"
                ),
                (
                    "wrong signature", BlueZStyleTests.interface, "SetDiscoveryFilter", ["x"],
                    e + "UnknownMethod Method \"SetDiscoveryFilter\" with signature \"s\" on interface "
                        + "\"org.bluez.Adapter1\" doesn't exist\n"
                ),
                (
                    "extra argument", BlueZStyleTests.interface, "StartDiscovery", ["x"],
                    e + "UnknownMethod Method \"StartDiscovery\" with signature \"s\" on interface "
                        + "\"org.bluez.Adapter1\" doesn't exist\n"
                ),
                (
                    "unknown method", BlueZStyleTests.interface, "Nope", [],
                    e + "UnknownMethod Method \"Nope\" with signature \"\" on interface \"org.bluez.Adapter1\" "
                        + "doesn't exist\n"
                ),
                (
                    "no interface", nil, "StartDiscovery", [],
                    e + "UnknownMethod Method \"StartDiscovery\" with signature \"\" on interface \"(null)\" "
                        + "doesn't exist\n"
                ),
                (
                    "get with wrong signature", p, "Get", [i],
                    e + "UnknownMethod Method \"Get\" with signature \"s\" on "
                        + "interface \"org.freedesktop.DBus.Properties\" doesn't exist\n"
                ),
                ("set ok", p, "Set", [i, "Powered", .variant(true)], "ok"),
            ]
            for (label, interface, member, arguments, expected) in cases {
                let got = await outcome(client, server, interface, member, arguments)
                #expect(got == expected, "\(label)")
            }
            let gone = try ObjectPath("/org/bluez/hci0/dev_00")
            #expect(
                await outcome(client, server, path: gone, "org.bluez.Device1", "Connect")
                    == e + "UnknownObject Method \"Connect\" with signature \"\" on interface \"org.bluez.Device1\" "
                    + "doesn't exist\n")
            await client.close()
            await server.close()
        }
    }

    @Test("introspection leaves Peer out, and Properties out of objects without properties")
    func introspection() async throws {
        try await PrivateBus.with { bus in
            let server = try await bus.connect()
            let client = try await bus.connect()
            server.objects.style = .bluez
            let manager = try ObjectPath("/org/bleagent")
            try server.objects.export(manager, interfaces: [BlueZStyleTests.agentManager()])
            try server.objects.export(Fixture.path, interfaces: [BlueZStyleTests.adapter()])
            func xml(_ path: ObjectPath) async throws -> String {
                try await client.call(
                    destination: server.uniqueName, path: path, interface: "org.freedesktop.DBus.Introspectable",
                    member: "Introspect"
                ).decode(String.self)
            }
            let top = try await xml(manager)
            #expect(!top.contains("org.freedesktop.DBus.Peer") && !top.contains("org.freedesktop.DBus.Properties"))
            #expect(top.contains("org.bluez.AgentManager1") && top.contains("<node name=\"test\"/>"))
            let adapter = try await xml(Fixture.path)
            #expect(
                !adapter.contains("org.freedesktop.DBus.Peer") && adapter.contains("org.freedesktop.DBus.Properties"))
            server.objects.style = .standard
            #expect(try await xml(manager).contains("org.freedesktop.DBus.Peer"))
            await client.close()
            await server.close()
        }
    }
    /// The interface names of an `a{sa{sv}}` value, in order.
    static func names(_ value: DBusValue?) -> [String] {
        guard case .dictionary(_, _, let entries)? = value else { return [] }
        return entries.compactMap { if case .string(let name) = $0.key { name } else { nil } }
    }

    @Test("InterfacesAdded, InterfacesRemoved and GetManagedObjects list Introspectable and Properties as gdbus does")
    func standardInterfacesAnnounced() async throws {
        try await PrivateBus.with { bus in
            let server = try await bus.connect()
            let client = try await bus.connect()
            server.objects.style = .bluez
            server.objects.addObjectManager(at: .root)
            let stream = try await client.signals(.objectManager(sender: server.uniqueName))
            let agent = try ObjectPath("/org/bluez")
            let adapter = try ObjectPath("/org/bluez/hci0")
            try server.objects.export(agent, interfaces: [BlueZStyleTests.agentManager()])
            try server.objects.export(adapter, interfaces: [BlueZStyleTests.adapter()])
            let managed = try await client.call(
                destination: server.uniqueName, path: .root, interface: "org.freedesktop.DBus.ObjectManager",
                member: "GetManagedObjects"
            ).arguments().first
            guard case .dictionary(_, _, let objects)? = managed else {
                Issue.record("GetManagedObjects returned \(String(describing: managed))")
                return
            }
            let listed = Dictionary(
                objects.map { (key: "\($0.key)", value: BlueZStyleTests.names($0.value)) },
                uniquingKeysWith: { a, _ in a })
            let introspectable = "org.freedesktop.DBus.Introspectable"
            let properties = "org.freedesktop.DBus.Properties"
            // Recorded from bluetoothd 5.66: /org/bluez has no Properties (AgentManager1 has no properties).
            #expect(listed["\(DBusValue.objectPath(agent))"] == [introspectable, "org.bluez.AgentManager1"])
            #expect(
                listed["\(DBusValue.objectPath(adapter))"] == [introspectable, BlueZStyleTests.interface, properties])
            try server.objects.removeInterface(BlueZStyleTests.interface, at: adapter)
            var iterator = stream.makeAsyncIterator()
            for expected in [
                [introspectable, "org.bluez.AgentManager1"], [introspectable, BlueZStyleTests.interface, properties],
            ] {
                let added = try #require(await iterator.next())
                #expect(added.member == "InterfacesAdded")
                #expect(BlueZStyleTests.names(try added.arguments().last) == expected)
            }
            let removed = try #require(await iterator.next())
            #expect(removed.member == "InterfacesRemoved")
            #expect(
                try removed.decode(ObjectPath.self, [String].self) == (
                    adapter, [properties, introspectable, BlueZStyleTests.interface]
                ))
            server.objects.style = .standard
            let plain = try await client.call(
                destination: server.uniqueName, path: .root, interface: "org.freedesktop.DBus.ObjectManager",
                member: "GetManagedObjects"
            ).decode([ObjectPath: [String: [String: DBusValue]]].self)
            #expect(plain[agent].map { Array($0.keys) } == ["org.bluez.AgentManager1"])
            await client.close()
            await server.close()
        }
    }
}
