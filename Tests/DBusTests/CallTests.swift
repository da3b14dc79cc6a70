import BLETesting
import DBus
import Glibc
import Testing

@Suite("Method calls through a real bus")
struct CallTests {
    @Test("a call to the bus itself gets its reply and our unique name is registered")
    func busCall() async throws {
        try await PrivateBus.with { bus in
            let connection = try await bus.connect()
            let name = try #require(connection.uniqueName)
            #expect(name.hasPrefix(":"))
            #expect(try await connection.listNames().contains(name))
            await connection.close()
        }
    }

    @Test("an exported method is called by another connection, which sees the caller's unique name")
    func exportedMethod() async throws {
        try await PrivateBus.with { bus in
            let server = try await bus.connect()
            let client = try await bus.connect()
            try server.objects.export(Fixture.path, interfaces: [Fixture.testInterface()])
            let reply = try await client.call(
                destination: server.uniqueName, path: Fixture.path, interface: Fixture.interface, member: "Sender")
            #expect(try reply.decode(String.self) == client.uniqueName)
            await client.close()
            await server.close()
        }
    }

    @Test("an error reply becomes a DBusError carrying its name and message")
    func errorReply() async throws {
        try await PrivateBus.with { bus in
            let server = try await bus.connect()
            let client = try await bus.connect()
            try server.objects.export(Fixture.path, interfaces: [Fixture.testInterface()])
            let error = await #expect(throws: DBusError.self) {
                try await client.call(
                    destination: server.uniqueName, path: Fixture.path, interface: Fixture.interface, member: "Fail",
                    arguments: ["org.bluez.Error.NotPermitted", "not today"])
            }
            #expect(error == DBusError("org.bluez.Error.NotPermitted", "not today"))
            await client.close()
            await server.close()
        }
    }

    @Test("unknown objects, interfaces, methods and wrong signatures get the standard errors")
    func standardErrors() async throws {
        try await PrivateBus.with { bus in
            let server = try await bus.connect()
            let client = try await bus.connect()
            try server.objects.export(Fixture.path, interfaces: [Fixture.testInterface()])
            func failure(
                _ path: ObjectPath, _ interface: String?, _ member: String, _ arguments: [DBusValue] = []
            )
                async -> DBusError.Name?
            {
                do {
                    _ = try await client.call(
                        destination: server.uniqueName, path: path, interface: interface, member: member,
                        arguments: arguments)
                    return nil
                } catch let error as DBusError {
                    return error.name
                } catch {
                    return nil
                }
            }
            #expect(await failure(try ObjectPath("/nowhere"), Fixture.interface, "Sender") == .unknownObject)
            #expect(await failure(Fixture.path, "org.bleagent.Missing", "Sender") == .unknownInterface)
            #expect(await failure(Fixture.path, Fixture.interface, "Missing") == .unknownMethod)
            #expect(await failure(Fixture.path, nil, "Missing") == .unknownMethod)
            #expect(await failure(Fixture.path, Fixture.interface, "EchoVariant", [.int32(1)]) == .invalidArgs)
            #expect(
                await failure(Fixture.path, "org.freedesktop.DBus.Properties", "Get", ["org.x.Y", "Z"])
                    == .unknownInterface)
            let noService = await #expect(throws: DBusError.self) {
                try await client.call(
                    destination: "org.bleagent.NoSuchService", path: Fixture.path, interface: nil, member: "X")
            }
            #expect(noService?.name == .serviceUnknown)
            await client.close()
            await server.close()
        }
    }

    @Test("a peer that never replies costs a NoReply error at the deadline, and the connection stays usable")
    func timeout() async throws {
        try await PrivateBus.with { bus in
            let gate = Gate()
            let server = try await bus.connect()
            let client = try await bus.connect()
            try server.objects.export(Fixture.path, interfaces: [Fixture.testInterface(gate: gate)])
            let started = ContinuousClock.now
            let error = await #expect(throws: DBusError.self) {
                try await client.call(
                    destination: server.uniqueName, path: Fixture.path, interface: Fixture.interface, member: "Wait",
                    timeout: .milliseconds(200))
            }
            #expect(error?.name == .noReply)
            #expect(ContinuousClock.now - started >= .milliseconds(200))
            let reply = try await client.call(
                destination: server.uniqueName, path: Fixture.path, interface: Fixture.interface, member: "Sender")
            #expect(try reply.decode(String.self) == client.uniqueName)
            gate.open()
            await client.close()
            await server.close()
        }
    }

    @Test("cancelling the task awaiting an in-flight call fails it with CancellationError before any reply")
    func cancellation() async throws {
        try await PrivateBus.with { bus in
            let gate = Gate()
            let started = Gate()
            let server = try await bus.connect()
            let client = try await bus.connect()
            try server.objects.export(Fixture.path, interfaces: [Fixture.testInterface(gate: gate, started: started)])
            let destination = server.uniqueName
            let task = Task {
                try await client.call(
                    destination: destination, path: Fixture.path, interface: Fixture.interface, member: "Wait",
                    timeout: .seconds(120))
            }
            await started.wait()
            task.cancel()
            await #expect(throws: CancellationError.self) { try await task.value }
            let early = Task {
                try await client.call(
                    destination: destination, path: Fixture.path, interface: Fixture.interface, member: "Wait",
                    timeout: .seconds(120))
            }
            early.cancel()
            await #expect(throws: CancellationError.self) { try await early.value }
            gate.open()
            await client.close()
            await server.close()
        }
    }

    @Test("closing the connection fails pending calls with Disconnected; later calls fail at once")
    func disconnectFailsPending() async throws {
        try await PrivateBus.with { bus in
            let gate = Gate()
            let started = Gate()
            let server = try await bus.connect()
            let client = try await bus.connect()
            try server.objects.export(Fixture.path, interfaces: [Fixture.testInterface(gate: gate, started: started)])
            let destination = server.uniqueName
            let pending = Task {
                try await client.call(
                    destination: destination, path: Fixture.path, interface: Fixture.interface, member: "Wait",
                    timeout: .seconds(120))
            }
            await started.wait()
            await client.close()
            let error = await #expect(throws: DBusError.self) { try await pending.value }
            #expect(error?.name == .disconnected)
            let after = await #expect(throws: DBusError.self) { try await client.listNames() }
            #expect(after?.name == .disconnected)
            #expect(client.isClosed)
            gate.open()
            await server.close()
        }
    }

    @Test("the bus going away fails pending calls with Disconnected")
    func busLossFailsPending() async throws {
        let bus = try await PrivateBus.start()
        let gate = Gate()
        let started = Gate()
        let server = try await bus.connect()
        let client = try await bus.connect()
        try server.objects.export(Fixture.path, interfaces: [Fixture.testInterface(gate: gate, started: started)])
        let destination = server.uniqueName
        let pending = Task {
            try await client.call(
                destination: destination, path: Fixture.path, interface: Fixture.interface, member: "Wait",
                timeout: .seconds(120))
        }
        await started.wait()
        bus.stop()
        let error = await #expect(throws: DBusError.self) { try await pending.value }
        #expect(error?.name == .disconnected)
        gate.open()
        await client.close()
        await server.close()
        #expect(client.isClosed && server.isClosed)
    }

    @Test("a peer may call back into us before it replies (bluetoothd's RegisterApplication pattern)")
    func callBackBeforeReply() async throws {
        try await PrivateBus.with { bus in
            let application = try await bus.connect()
            let manager = try await bus.connect()
            let appRoot = try ObjectPath("/org/bleagent/app")
            application.objects.addObjectManager(at: appRoot)
            let service = try ExportedInterface(
                "org.bluez.GattService1",
                properties: [ExportedProperty("UUID", type: .string, value: "180d")])
            try application.objects.export(appRoot.appending("service0"), interfaces: [service])
            let register = try ExportedInterface(
                "org.bleagent.Manager",
                methods: [
                    ExportedMethod("Register", in: "o", out: "u") { call in
                        let (root) = try call.decode(ObjectPath.self)
                        let objects = try await call.connection.call(
                            destination: call.sender, path: root, interface: "org.freedesktop.DBus.ObjectManager",
                            member: "GetManagedObjects"
                        ).decode([ObjectPath: [String: [String: DBusValue]]].self)
                        return [.uint32(UInt32(objects.count))]
                    }
                ])
            try manager.objects.export(try ObjectPath("/org/bleagent/manager"), interfaces: [register])
            let reply = try await application.call(
                destination: manager.uniqueName, path: try ObjectPath("/org/bleagent/manager"),
                interface: "org.bleagent.Manager", member: "Register", arguments: [.objectPath(appRoot)],
                timeout: .seconds(10))
            #expect(try reply.decode(UInt32.self) == 1)
            await application.close()
            await manager.close()
        }
    }

    @Test("incoming calls start their handlers in arrival order (no-reply writes keep their order)")
    func handlerOrder() async throws {
        try await PrivateBus.with { bus in
            let log = Collector<Int32>()
            let server = try await bus.connect()
            let client = try await bus.connect()
            try server.objects.export(Fixture.path, interfaces: [Fixture.testInterface(log: log)])
            for value in Int32(0)..<300 {
                try client.callNoReply(
                    destination: server.uniqueName, path: Fixture.path, interface: Fixture.interface,
                    member: "Record", arguments: [.int32(value)])
            }
            _ = try await client.call(
                destination: server.uniqueName, path: Fixture.path, interface: Fixture.interface, member: "Record",
                arguments: [.int32(300)])
            #expect(log.values == Array(0...300))
            await client.close()
            await server.close()
        }
    }

    @Test("system() and session() honour DBUS_SYSTEM_BUS_ADDRESS and DBUS_SESSION_BUS_ADDRESS")
    func environmentAddresses() async throws {
        try await TestBed.with { bed in
            let probe = try await bed.spawn(buildDirectory + "/BusAddressProbe", input: true)
            let system = try #require(await probe.readLine())
            let session = try #require(await probe.readLine())
            let names = try await bed.connect().listNames()
            for (line, kind) in [(system, "system"), (session, "session")] {
                let name = String(line.dropFirst(kind.count + 1))
                #expect(line.hasPrefix(kind + " :"), "\(line)")
                #expect(names.contains(name), "the probe's \(kind) connection is on the test's bus")
            }
            probe.closeInput()
            let result = await probe.finish()
            #expect(result.status == 0, "\(result.output)\(result.errors)")
        }
    }

    @Test("a method call message can be called once; calling it again is refused instead of confusing replies")
    func messageCalledTwice() async throws {
        try await PrivateBus.with { bus in
            let connection = try await bus.connect()
            let message = try DBusMessage.methodCall(
                destination: "org.freedesktop.DBus", path: try ObjectPath("/org/freedesktop/DBus"),
                interface: "org.freedesktop.DBus", member: "GetId")
            _ = try await connection.call(message)
            let error = await #expect(throws: DBusError.self) { try await connection.call(message) }
            #expect(error?.name == .invalidArgs)
            await connection.close()
        }
    }

    @Test("an unreachable address is a thrown DBusError, not a crash")
    func badAddress() async throws {
        let error = await #expect(throws: DBusError.self) {
            try await DBusConnection.connect(address: "unix:path=/nonexistent/bleagent-socket")
        }
        #expect(error?.name == .noServer || error?.name == .fileNotFound)
        await #expect(throws: DBusError.self) { try await DBusConnection.connect(address: "bogus") }
    }
}
