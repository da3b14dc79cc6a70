import BLETesting
import DBus
import Testing

/// org.blesim.Control1: faults injected at run time.
@Suite("blesim injects faults", .serialized)
struct FaultInjectionTests {
    static let address = DBusValue.string(HRM.address)

    @Test("FailNext fails the next N operations with the given error, then operations succeed")
    func failNext() async throws {
        let bus = try await PrivateBus.start()
        let sim = try await BlesimProcess.start(
            address: bus.address, scenario: nil, options: ["--scenario", Air.scenario])
        let client = try await BlueZClient.connect(bus)
        try await client.connectHRM()
        try await client.control(
            "FailNext",
            [
                Self.address, .string("2A19"), .uint32(2), .string("org.bluez.Error.NotAuthorized"),
                .string("Operation Not Authorized"),
            ])
        for _ in 0..<2 {
            #expect(
                await client.errorName { _ = try await client.read(HRM.batteryLevel) }
                    == "org.bluez.Error.NotAuthorized")
        }
        #expect(try await client.read(HRM.batteryLevel) == [100])
        _ = sim
    }

    @Test("a timeout fault does not answer before the ATT timeout (30 s): a shorter client deadline expires")
    func timeout() async throws {
        let bus = try await PrivateBus.start()
        let sim = try await BlesimProcess.start(
            address: bus.address, scenario: nil, options: ["--scenario", Air.scenario])
        let client = try await BlueZClient.connect(bus)
        try await client.connectHRM()
        try await client.control("FailNext", [Self.address, .string(""), .uint32(1), .string("timeout"), .string("")])
        let name = await client.errorName {
            _ = try await client.connection.call(
                destination: "org.bluez", path: ObjectPath(HRM.batteryLevel), interface: BlueZClient.characteristic,
                member: "ReadValue", arguments: [BlueZClient.emptyOptions], timeout: .milliseconds(500))
        }
        #expect(name == "org.freedesktop.DBus.Error.NoReply")
        _ = sim
    }

    @Test(
        "a timeout fault on Connect: Failed le-connection-abort-by-local after the scenario's connectFailSeconds, then Connect works"
    )
    func connectTimeout() async throws {
        let bus = try await PrivateBus.start()
        let sim = try await BlesimProcess.start(
            address: bus.address, scenario: nil, options: ["--scenario", Air.scenario])
        let client = try await BlueZClient.connect(bus)
        // Discover HRM-C, then leave it disconnected with the fault armed.
        try await client.connectHRM()
        _ = try await client.call(Air.hrm, "org.bluez.Device1", "Disconnect")
        #expect(await client.log.wait { BlueZClient.changed($0, Air.hrm, "Connected", .boolean(false)) })
        try await client.control("FailNext", [Self.address, .string(""), .uint32(1), .string("timeout"), .string("")])
        let clock = ContinuousClock()
        let start = clock.now
        // bluetoothd answers a connection the peer never completes (air.json: connectFailSeconds 0.3);
        // a call left unanswered would end in the client's NoReply after 20 s instead.
        do {
            _ = try await client.connection.call(
                destination: "org.bluez", path: ObjectPath(Air.hrm), interface: "org.bluez.Device1",
                member: "Connect", arguments: [], timeout: .seconds(20))
            Issue.record("Connect succeeded")
        } catch let error as DBusError {
            #expect(error.name.rawValue == "org.bluez.Error.Failed")
            #expect(error.message == "le-connection-abort-by-local")
        }
        #expect(clock.now - start >= .milliseconds(300), "not before connectFailSeconds")
        _ = try await client.call(Air.hrm, "org.bluez.Device1", "Connect")
        #expect(try await client.property(Air.hrm, "org.bluez.Device1", "Connected") == .boolean(true))
        _ = sim
    }

    @Test("SetDelay holds answers back; a second read at another offset meanwhile is InProgress")
    func delayAndInProgress() async throws {
        let bus = try await PrivateBus.start()
        let sim = try await BlesimProcess.start(
            address: bus.address, scenario: nil, options: ["--scenario", Air.scenario])
        let client = try await BlueZClient.connect(bus)
        try await client.connectHRM()
        try await client.control("SetDelay", [Self.address, .double(10)])
        // Two reads at different offsets at once. Which one blesim admits first depends on which task sends first;
        // that one is held back for the delay, and the other, arriving meanwhile, is InProgress.
        let whole = Task { () -> ([UInt8]?, String?) in
            var value: [UInt8]?
            let error = await client.errorName { value = try await client.read(HRM.longNote) }
            return (value, error)
        }
        let tail = Task { () -> ([UInt8]?, String?) in
            var value: [UInt8]?
            let error = await client.errorName { value = try await client.read(HRM.longNote, offset: 5) }
            return (value, error)
        }
        let (wholeValue, wholeError) = await whole.value
        let (tailValue, tailError) = await tail.value
        let text = Array(HRM.longText.utf8)
        if wholeError == nil {
            #expect(wholeValue == text && tailError == "org.bluez.Error.InProgress", "\(String(describing: tailError))")
        } else {
            #expect(wholeError == "org.bluez.Error.InProgress", "\(String(describing: wholeError))")
            #expect(tailError == nil && tailValue == Array(text.dropFirst(5)), "\(String(describing: tailError))")
        }
        _ = sim
    }

    @Test("DropLink, Silence, Move and PowerCycle: the link goes down and Connect fails le-connection-abort-by-local")
    func linkFaults() async throws {
        let bus = try await PrivateBus.start()
        let sim = try await BlesimProcess.start(
            address: bus.address, scenario: nil, options: ["--scenario", Air.scenario])
        let client = try await BlueZClient.connect(bus)
        try await client.connectHRM()
        try await client.control("DropLink", [Self.address])
        #expect(await client.log.wait { BlueZClient.changed($0, Air.hrm, "Connected", .boolean(false)) })
        try await client.control("Move", [Self.address, .double(5000)])
        await expectAbort(client)
        try await client.control("Move", [Self.address, .double(3)])
        try await client.control("Silence", [Self.address, .boolean(true)])
        await expectAbort(client)
        try await client.control("Silence", [Self.address, .boolean(false)])
        _ = try await client.call(Air.hrm, "org.bluez.Device1", "Connect")
        #expect(try await client.property(Air.hrm, "org.bluez.Device1", "Connected") == .boolean(true))
        try await client.control("PowerCycle", [.uint32(0)])
        #expect(
            await client.log.wait { messages in
                let powered = Signals.changes(messages).filter { $0.path == "/org/bluez/hci0" }
                    .compactMap { $0.changed["Powered"] }
                guard let off = powered.firstIndex(of: .boolean(false)) else { return false }
                return powered[(off + 1)...].contains(.boolean(true))
            }, "PowerCycle is seen as Powered false, then Powered true")
        #expect(try await client.property(Air.hrm, "org.bluez.Device1", "Connected") == .boolean(false))
        #expect(try await client.property("/org/bluez/hci0", "org.bluez.Adapter1", "Powered") == .boolean(true))
        _ = sim
    }

    private func expectAbort(_ client: BlueZClient) async {
        do {
            _ = try await client.call(Air.hrm, "org.bluez.Device1", "Connect")
            Issue.record("Connect succeeded")
        } catch let error as DBusError {
            #expect(error.name.rawValue == "org.bluez.Error.Failed")
            #expect(error.message == "le-connection-abort-by-local")
        } catch {
            Issue.record("\(error)")
        }
    }
}
