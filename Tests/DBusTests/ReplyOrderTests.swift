import BLETesting
import DBus
import Testing

/// Replies before the signals their call caused, and setters that choose what is stored (bluetoothd's behaviour).
@Suite("Reply order and property setters")
struct ReplyOrderTests {
    static let interface = "org.bleagent.Adapter"

    /// An adapter-like interface: `Start` sets `Discovering` (optionally flushing, with markers around it); `Count`
    /// sets `Mark` to 1 and then 2 as events (``ObjectServer/setPropertiesNow(_:interface:at:)``) around a held
    /// `Discovering`; `Powered` off also clears `Discovering`; `Alias` "" falls back to `Name`.
    static func adapter(
        objects: @escaping @Sendable () -> ObjectServer, flush: Bool = false
    ) throws
        -> ExportedInterface
    {
        try ExportedInterface(
            interface,
            methods: [
                ExportedMethod("Start", in: "", out: "") { call in
                    try objects().setProperty("Discovering", to: true, interface: interface, at: call.path)
                    if flush { call.flushSignals() }
                    try call.connection.emitSignal(path: call.path, interface: interface, member: "Marker")
                    call.afterReply {
                        try? call.connection.emitSignal(path: call.path, interface: interface, member: "After")
                    }
                    return []
                },
                ExportedMethod("Count", in: "", out: "") { call in
                    try objects().setPropertiesNow([("Mark", .uint32(1))], interface: interface, at: call.path)
                    try objects().setProperty("Discovering", to: true, interface: interface, at: call.path)
                    try objects().setPropertiesNow([("Mark", .uint32(2))], interface: interface, at: call.path)
                    try call.connection.emitSignal(path: call.path, interface: interface, member: "Marker")
                    return []
                },
            ],
            properties: [
                ExportedProperty("Name", type: .string, value: "hci0"),
                ExportedProperty("Discovering", type: .boolean, value: false),
                ExportedProperty("Mark", type: .uint32, value: .uint32(0)),
                ExportedProperty.writable("Powered", type: .boolean, value: true) { requested, call in
                    if requested == false {
                        try objects().setProperty("Discovering", to: false, interface: interface, at: call.path)
                    }
                    return requested
                },
                ExportedProperty.writable("Alias", type: .string, value: "hci0") { requested, call in
                    requested == "" ? objects().property("Name", interface: interface, at: call.path) : requested
                },
            ],
            signals: [try ExportedSignal("Marker"), try ExportedSignal("After")])
    }

    /// What a signal says, shortly: `Marker`, `After`, or the changed property names and values.
    static func summary(_ signal: DBusMessage) throws -> String {
        guard signal.member == "PropertiesChanged" else { return signal.member ?? "?" }
        let (_, changed, _) = try signal.decode(String.self, [String: DBusValue].self, [String].self)
        return changed.keys.sorted().map { "\($0)=\(changed[$0].map { "\($0)" } ?? "")" }.joined(separator: ",")
    }

    func withAdapter(
        flush: Bool = false,
        _ body: (DBusConnection, DBusConnection, DBusSignalStream.AsyncIterator) async throws -> Void
    ) async throws {
        try await PrivateBus.with { bus in
            let server = try await bus.connect()
            let client = try await bus.connect()
            let objects = server.objects
            try objects.export(Fixture.path, interfaces: [ReplyOrderTests.adapter(objects: { objects }, flush: flush)])
            let stream = try await client.signals(MatchRule(sender: server.uniqueName, pathNamespace: Fixture.path))
            try await body(server, client, stream.makeAsyncIterator())
            await client.close()
            await server.close()
        }
    }

    func call(
        _ client: DBusConnection, _ server: DBusConnection, _ member: String, _ arguments: [DBusValue] = []
    )
        async throws
    {
        let properties = member == "Set"
        _ = try await client.call(
            destination: server.uniqueName, path: Fixture.path,
            interface: properties ? "org.freedesktop.DBus.Properties" : ReplyOrderTests.interface, member: member,
            arguments: arguments)
    }

    /// Calls `member` and returns the next `count` signals, each as ``summary(_:)`` puts it.
    func signals(after member: String, _ count: Int, flush: Bool = false) async throws -> [String] {
        var seen: [String] = []
        try await withAdapter(flush: flush) { server, client, iterator in
            var iterator = iterator
            try await call(client, server, member)
            for _ in 0..<count { seen.append(try ReplyOrderTests.summary(try #require(await iterator.next()))) }
        }
        return seen
    }

    /// Changes a property locally (outside any call): its signal marks "everything before has been sent".
    func mark(_ server: DBusConnection, _ value: UInt32) throws {
        try server.objects.setProperty(
            "Mark", to: .uint32(value), interface: ReplyOrderTests.interface, at: Fixture.path)
    }

    @Test("a handler's PropertiesChanged leaves after its reply: after signals sent directly, before afterReply work")
    func handlerSignalsFollowTheReply() async throws {
        #expect(try await signals(after: "Start", 3) == ["Marker", "Discovering=true", "After"])
    }

    @Test("flushSignals sends what a handler emitted so far before it replies")
    func flushSendsEarly() async throws {
        #expect(try await signals(after: "Start", 3, flush: true) == ["Discovering=true", "Marker", "After"])
    }

    @Test(
        "changes made as events leave at once with their own values, in order, while the handler's other changes follow its reply"
    )
    func eventsLeaveAtOnce() async throws {
        #expect(try await signals(after: "Count", 4) == ["Mark=1", "Mark=2", "Marker", "Discovering=true"])
    }

    @Test("a setter's own changes fold into one PropertiesChanged with the property set")
    func setterChangesFold() async throws {
        try await withAdapter { server, client, iterator in
            var iterator = iterator
            try await call(client, server, "Start")
            for _ in 0..<3 { _ = await iterator.next() }
            try await call(client, server, "Set", [.string(ReplyOrderTests.interface), "Powered", .variant(false)])
            try mark(server, 1)
            let folded = try ReplyOrderTests.summary(try #require(await iterator.next()))
            #expect(folded == "Discovering=false,Powered=false")
            #expect(try ReplyOrderTests.summary(try #require(await iterator.next())) == "Mark=1")
        }
    }

    @Test("Set to the current value stores nothing new and emits no PropertiesChanged")
    func unchangedSetIsSilent() async throws {
        try await withAdapter { server, client, iterator in
            var iterator = iterator
            try await call(client, server, "Set", [.string(ReplyOrderTests.interface), "Powered", .variant(true)])
            try mark(server, 1)
            #expect(try ReplyOrderTests.summary(try #require(await iterator.next())) == "Mark=1")
        }
    }

    @Test("a setter chooses the stored value: Alias \"\" stores and reports Name")
    func setterChoosesValue() async throws {
        try await withAdapter { server, client, iterator in
            var iterator = iterator
            let i = DBusValue.string(ReplyOrderTests.interface)
            try await call(client, server, "Set", [i, "Alias", .variant("kitchen")])
            #expect(
                try ReplyOrderTests.summary(try #require(await iterator.next()))
                    == "Alias=\(DBusValue.string("kitchen"))")
            try await call(client, server, "Set", [i, "Alias", .variant("")])
            #expect(
                try ReplyOrderTests.summary(try #require(await iterator.next())) == "Alias=\(DBusValue.string("hci0"))")
            #expect(server.objects.property("Alias", interface: ReplyOrderTests.interface, at: Fixture.path) == "hci0")
        }
    }
}
