import BLETesting
import DBus
import Testing

@Suite("org.freedesktop.DBus.ObjectManager and Introspectable")
struct ObjectManagerTests {
    static let root: ObjectPath = { (try? ObjectPath("/org/bleagent/app")) ?? .root }()

    static func service(_ uuid: String) throws -> ExportedInterface {
        try ExportedInterface(
            "org.bluez.GattService1",
            properties: [
                ExportedProperty("UUID", type: .string, value: .string(uuid)),
                ExportedProperty("Primary", type: .boolean, value: true),
            ])
    }

    typealias Managed = [ObjectPath: [String: [String: DBusValue]]]

    @Test("GetManagedObjects lists every object below the manager with its interfaces and properties")
    func managedObjects() async throws {
        try await PrivateBus.with { bus in
            let server = try await bus.connect()
            let client = try await bus.connect()
            server.objects.addObjectManager(at: ObjectManagerTests.root)
            let s0 = try ObjectManagerTests.root.appending("service0")
            let c0 = try s0.appending("char0")
            try server.objects.export(s0, interfaces: [ObjectManagerTests.service("180d")])
            try server.objects.export(c0, interfaces: [Fixture.testInterface(), PropertiesTests.device()])
            try server.objects.export(try ObjectPath("/elsewhere"), interfaces: [ObjectManagerTests.service("1")])
            let objects = try await client.call(
                destination: server.uniqueName, path: ObjectManagerTests.root,
                interface: "org.freedesktop.DBus.ObjectManager", member: "GetManagedObjects"
            ).decode(Managed.self)
            #expect(Set(objects.keys) == [s0, c0])
            #expect(objects[s0]?["org.bluez.GattService1"]?["UUID"] == "180d")
            #expect(Set(objects[c0]?.keys.map { $0 } ?? []) == [Fixture.interface, PropertiesTests.interface])
            #expect(objects[c0]?[Fixture.interface]?.isEmpty == true)
            await client.close()
            await server.close()
        }
    }

    @Test("exporting, adding and removing objects and interfaces emit InterfacesAdded and InterfacesRemoved")
    func addedAndRemoved() async throws {
        try await PrivateBus.with { bus in
            let server = try await bus.connect()
            let client = try await bus.connect()
            server.objects.addObjectManager(at: ObjectManagerTests.root)
            let stream = try await client.signals(.objectManager(sender: server.uniqueName))
            let s0 = try ObjectManagerTests.root.appending("service0")
            try server.objects.export(s0, interfaces: [ObjectManagerTests.service("180f")])
            try server.objects.addInterface(PropertiesTests.device(), at: s0)
            try server.objects.removeInterface(PropertiesTests.interface, at: s0)
            try server.objects.unexport(s0)
            var iterator = stream.makeAsyncIterator()
            let added = try #require(await iterator.next())
            #expect(added.member == "InterfacesAdded" && added.path == ObjectManagerTests.root)
            let (path, interfaces) = try added.decode(ObjectPath.self, [String: [String: DBusValue]].self)
            #expect(path == s0 && interfaces["org.bluez.GattService1"]?["UUID"] == "180f")
            let second = try #require(await iterator.next())
            let (_, more) = try second.decode(ObjectPath.self, [String: [String: DBusValue]].self)
            #expect(Array(more.keys) == [PropertiesTests.interface])
            let removedOne = try #require(await iterator.next())
            #expect(try removedOne.decode(ObjectPath.self, [String].self) == (s0, [PropertiesTests.interface]))
            let removedAll = try #require(await iterator.next())
            #expect(try removedAll.decode(ObjectPath.self, [String].self) == (s0, ["org.bluez.GattService1"]))
            await client.close()
            await server.close()
        }
    }

    @Test("Introspect describes interfaces, methods, properties and child nodes, also on intermediate paths")
    func introspect() async throws {
        try await PrivateBus.with { bus in
            let server = try await bus.connect()
            let client = try await bus.connect()
            server.objects.addObjectManager(at: ObjectManagerTests.root)
            let s0 = try ObjectManagerTests.root.appending("service0")
            try server.objects.export(s0, interfaces: [Fixture.testInterface(), PropertiesTests.device()])
            func introspect(_ path: ObjectPath) async throws -> String {
                try await client.call(
                    destination: server.uniqueName, path: path, interface: "org.freedesktop.DBus.Introspectable",
                    member: "Introspect"
                ).decode(String.self)
            }
            let xml = try await introspect(s0)
            #expect(xml.contains("<interface name=\"org.bleagent.Test\">"))
            #expect(xml.contains("<arg type=\"v\" direction=\"in\"/>"))
            #expect(xml.contains("<property name=\"Alias\" type=\"s\" access=\"readwrite\"/>"))
            #expect(xml.contains("<property name=\"Secret\" type=\"u\" access=\"write\"/>"))
            #expect(xml.contains("value=\"invalidates\""))
            #expect(xml.contains("org.freedesktop.DBus.Properties"))
            let rootXML = try await introspect(ObjectManagerTests.root)
            #expect(rootXML.contains("org.freedesktop.DBus.ObjectManager"))
            #expect(rootXML.contains("<node name=\"service0\"/>"))
            let top = try await introspect(.root)
            #expect(top.contains("<node name=\"org\"/>"))
            await client.close()
            await server.close()
        }
    }

    @Test("busctl and dbus-send (tools we did not write) introspect, read properties and call our objects")
    func referenceTools() async throws {
        try await PrivateBus.with { bus in
            let server = try await bus.connect()
            try server.objects.export(Fixture.path, interfaces: [Fixture.testInterface(), PropertiesTests.device()])
            let destination = try #require(server.uniqueName)
            let address = bus.address
            let introspect = try await tool([
                "busctl", "--address=\(address)", "introspect", destination, Fixture.path.rawValue,
            ])
            #expect(introspect.status == 0)
            #expect(introspect.output.contains(".EchoVariant"))
            #expect(introspect.output.contains("org.bleagent.Device"))
            let property = try await tool([
                "busctl", "--address=\(address)", "get-property", destination, Fixture.path.rawValue,
                PropertiesTests.interface, "Value",
            ])
            #expect(property.output.trimmingSuffix() == "ay 2 1 2")
            let echo = try await tool([
                "busctl", "--address=\(address)", "call", destination, Fixture.path.rawValue, Fixture.interface,
                "EchoVariant", "v", "a{sv}", "2", "k", "s", "v", "n", "u", "7",
            ])
            #expect(echo.output.trimmingSuffix() == "v a{sv} 2 \"k\" s \"v\" \"n\" u 7")
            let send = try await tool([
                "dbus-send", "--bus=\(address)", "--print-reply", "--dest=\(destination)", Fixture.path.rawValue,
                "\(Fixture.interface).Fail", "string:org.bleagent.Error.Test", "string:refused",
            ])
            #expect(send.status != 0)
            #expect(send.output.contains("org.bleagent.Error.Test: refused"))
            await server.close()
        }
    }
}

extension String {
    func trimmingSuffix() -> String {
        var text = self
        while let last = text.last, last.isWhitespace { text.removeLast() }
        return text
    }
}

@Suite("Nested object managers")
struct NestedManagerTests {
    @Test("only the nearest object manager announces an object")
    func nearestManagerAnnounces() async throws {
        try await PrivateBus.with { bus in
            let server = try await bus.connect()
            let client = try await bus.connect()
            let outer = ObjectManagerTests.root
            let inner = try outer.appending("sub")
            server.objects.addObjectManager(at: outer)
            server.objects.addObjectManager(at: inner)
            let stream = try await client.signals(.objectManager(sender: server.uniqueName))
            try server.objects.export(try inner.appending("x"), interfaces: [ObjectManagerTests.service("1")])
            try server.objects.export(try outer.appending("y"), interfaces: [ObjectManagerTests.service("2")])
            var iterator = stream.makeAsyncIterator()
            typealias Added = [String: [String: DBusValue]]
            let first = try #require(await iterator.next())
            let firstPath = try first.decode(ObjectPath.self, Added.self).0
            let x = try inner.appending("x")
            #expect(first.path == inner && firstPath == x)
            let second = try #require(await iterator.next())
            let secondPath = try second.decode(ObjectPath.self, Added.self).0
            let y = try outer.appending("y")
            #expect(second.path == outer && secondPath == y)
            await client.close()
            await server.close()
        }
    }
}
