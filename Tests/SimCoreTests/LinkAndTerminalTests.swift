import GATT
import PaymentTerminalProfile
import SimCore
import Testing

/// Connections, gatt-client semantics and the virtual payment terminal, on the pure world.
@Suite("links and remote GATT")
struct LinkAndTerminalTests {
    static let scenario = """
        { "connectFailSeconds": 0.5, "devices": [
          { "address": "C0:00:00:00:00:01", "intervalMs": 20, "rssi": { "distance": 1 },
            "paymentTerminal": { "name": "T1", "terminalId": "VT-9", "latencyMs": 1000,
              "rules": [ { "amountAbove": 500, "outcome": "declined", "reason": "amountLimit" } ] } },
          { "address": "C0:00:00:00:00:02", "intervalMs": 20, "connectable": false, "rssi": { "distance": 1 } } ] }
        """
    static let terminal = DeviceAddress(validBytes: (0xC0, 0, 0, 0, 0, 1))
    static let beacon = DeviceAddress(validBytes: (0xC0, 0, 0, 0, 0, 2))
    static let devicePath = "/org/bluez/hci0/dev_C0_00_00_00_00_01"

    /// A world whose adapter has discovered both devices.
    static func world() throws -> SimWorld {
        var world = SimWorld(scenario: try Scenario.parse(scenario))
        _ = try world.withAdapter(0) { adapter throws(BlueZError) in try adapter.startDiscovery(owner: ":1.1") }
        _ = world.advance(to: SimInstant.zero.advanced(bySeconds: 0.1))
        return world
    }

    static func connected() throws -> SimWorld {
        var world = try world()
        let outcome = try world.beginConnect(
            adapter: 0, address: terminal, at: SimInstant.zero.advanced(bySeconds: 0.1))
        #expect(outcome == .connects(delay: 0.02))
        _ = world.completeConnect(adapter: 0, address: terminal)
        _ = world.resolveServices(adapter: 0, address: terminal)
        return world
    }

    static func path(_ uuid: BluetoothUUID, in world: SimWorld) throws -> String {
        let server = try #require(world.servers[0])
        let chrc = try #require(server.services.flatMap(\.characteristics).first { $0.uuid == uuid })
        return try #require(
            GATTObjects.characteristicPath(valueHandle: chrc.valueHandle, devicePath: devicePath, in: server))
    }

    @Test(
        "Connect: Connected true, then the GATT objects and ServicesResolved; a device not heard is waited for until connectFailSeconds"
    )
    func connect() throws {
        var world = try Self.world()
        #expect(
            try world.beginConnect(adapter: 0, address: Self.beacon, at: .zero)
                == .waits(SimWorld.connectionAbort, seconds: 0.5))
        _ = try world.beginConnect(adapter: 0, address: Self.terminal, at: .zero)
        let up = world.completeConnect(adapter: 0, address: Self.terminal).flatMap(\.events)
        #expect(up == [.deviceChanged(Self.terminal, changed: [Property("Connected", .bool(true))], invalidated: [])])
        let resolved = world.resolveServices(adapter: 0, address: Self.terminal).flatMap(\.events)
        let added = resolved.compactMap { event -> String? in
            if case .objectAdded(let path, _, _) = event { path } else { nil }
        }
        #expect(added.first == Self.devicePath + "/service000a")
        // The battery plugin's Battery1 (the terminal serves a Battery Service) follows ServicesResolved.
        #expect(
            resolved.last.map { if case .objectAdded(_, "org.bluez.Battery1", _) = $0 { true } else { false } } == true)
        guard case .deviceChanged(_, let changed, _)? = resolved.dropLast().last else {
            Issue.record("no ServicesResolved")
            return
        }
        #expect(changed.first == Property("ServicesResolved", .bool(true)))
        #expect(changed.map(\.name) == ["ServicesResolved", "UUIDs"])
        #expect(try world.beginConnect(adapter: 0, address: Self.terminal, at: .zero) == .alreadyConnected)
    }

    @Test(
        "a device not heard when Connect comes (silenced) connects once it is heard again, as the kernel's attempt does"
    )
    func connectWaitsForTheDevice() throws {
        var world = try Self.world()
        _ = world.silence(Self.terminal, true)
        #expect(
            try world.beginConnect(adapter: 0, address: Self.terminal, at: .zero)
                == .waits(SimWorld.connectionAbort, seconds: 0.5))
        _ = world.silence(Self.terminal, false)
        #expect(try world.beginConnect(adapter: 0, address: Self.terminal, at: .zero) == .connects(delay: 0.02))
    }

    @Test(
        "a timeout fault on Connect fails it le-connection-abort-by-local after connectFailSeconds, as bluetoothd when the peer never completes the connection"
    )
    func connectTimeout() throws {
        var world = try Self.world()
        world.faults.rules.append(FaultPlan.Rule(address: Self.terminal, remaining: 1, action: .timeout))
        #expect(
            try world.beginConnect(adapter: 0, address: Self.terminal, at: .zero)
                == .fails(SimWorld.connectionAbort, delay: 0.5))
        #expect(
            try world.beginConnect(adapter: 0, address: Self.terminal, at: .zero) == .connects(delay: 0.02),
            "the fault is spent")
    }

    @Test("a connected device outlives its temporary timer; it goes at the first look after its link drops")
    func connectedDeviceExpiresAfterItsLink() throws {
        var world = try Self.connected()
        _ = world.silence(Self.terminal, true)
        _ = world.silence(Self.beacon, true)
        let removed = { (batches: [SimWorld.Batch]) in batches.flatMap(\.events).removedDevices }
        #expect(removed(world.advance(to: .seconds(40))) == [Self.beacon], "the unconnected beacon goes at 30 s")
        #expect(world.adapters[0].devices[Self.terminal] != nil, "the connected terminal stays")
        #expect(removed(world.advance(to: .seconds(60))).isEmpty)
        _ = world.dropLinks(Self.terminal)
        #expect(removed(world.advance(to: .seconds(60.001))) == [Self.terminal])
        #expect(world.adapters[0].devices.isEmpty)
    }

    @Test(
        "UnsignalledConnect: the next link comes up with no Connected signal but shows in the properties; the one after signals"
    )
    func unsignalledConnect() throws {
        var world = try Self.world()
        #expect(world.apply(.unsignalledConnect(Self.terminal)).applied)
        _ = try world.beginConnect(adapter: 0, address: Self.terminal, at: .zero)
        #expect(
            world.completeConnect(adapter: 0, address: Self.terminal).flatMap(\.events) == [
                .deviceChangedSilently(Self.terminal, changed: [Property("Connected", .bool(true))])
            ])
        let properties = try #require(world.adapters[0].devices[Self.terminal]).properties(
            adapterPath: "/org/bluez/hci0")
        #expect(properties.contains(Property("Connected", .bool(true))))
        _ = world.apply(.dropLink(Self.terminal))
        _ = try world.beginConnect(adapter: 0, address: Self.terminal, at: .zero)
        let again = world.completeConnect(adapter: 0, address: Self.terminal).flatMap(\.events)
        #expect(
            again == [.deviceChanged(Self.terminal, changed: [Property("Connected", .bool(true))], invalidated: [])])
        #expect(!world.apply(.unsignalledConnect(DeviceAddress(validBytes: (0xC0, 0, 0, 0, 0, 9)))).applied)
    }

    @Test("a second write while one is in flight is InProgress; a read of another offset too")
    func inProgress() throws {
        var world = try Self.connected()
        let info = try Self.path(PaymentTerminalProfile.terminalInfoUUID, in: world)
        let request = try Self.path(PaymentTerminalProfile.paymentRequestUUID, in: world)
        let read = try world.beginRead(path: info, offset: 0)
        #expect(throws: BluetoothdError.inProgress) { try world.beginRead(path: info, offset: 2) }
        _ = try world.beginRead(path: info, offset: 0)  // the same offset joins
        _ = world.finish(read)
        let write = try world.beginWrite(path: request, value: [1], offset: 0, type: nil)
        #expect(throws: BluetoothdError.inProgress) {
            try world.beginWrite(path: request, value: [1], offset: 0, type: nil)
        }
        _ = world.finish(write)
    }

    @Test("a write in flight when the link drops ends there: it never lands on the link that comes up after")
    func inFlightWriteDiesWithItsLink() throws {
        var world = try Self.connected()
        let request = try Self.path(PaymentTerminalProfile.paymentRequestUUID, in: world)
        let id = try TransactionID(bytes: Array(0..<16))
        let payment = try PaymentRequest(transactionID: id, amount: 250, currency: CurrencyCode("EUR"), reference: "A1")
        let write = try world.beginWrite(path: request, value: payment.encoded(), offset: 0, type: nil)
        _ = world.dropLinks(Self.terminal)
        _ = try world.beginConnect(adapter: 0, address: Self.terminal, at: SimInstant.zero.advanced(bySeconds: 0.5))
        _ = world.completeConnect(adapter: 0, address: Self.terminal)
        _ = world.resolveServices(adapter: 0, address: Self.terminal)
        // The new link has no write in flight: a write of its own is not InProgress.
        let fresh = try world.beginWrite(path: request, value: [1], offset: 0, type: nil)
        let (late, _) = world.finish(write, at: SimInstant.zero.advanced(bySeconds: 1))
        #expect(throws: BluetoothdError.failed("Not connected")) { try late.get() }
        #expect(world.terminalTransactions(Self.terminal)?.isEmpty == true, "the old write reached the terminal")
        // The old write's end did not clear the new link's write in flight.
        #expect(throws: BluetoothdError.inProgress) {
            try world.beginWrite(path: request, value: [1], offset: 0, type: nil)
        }
        _ = world.finish(fresh)
    }

    @Test(
        "the virtual terminal answers a Payment Request with indications: pending, then the final status after its latency"
    )
    func payment() throws {
        var world = try Self.connected()
        let status = try Self.path(PaymentTerminalProfile.transactionStatusUUID, in: world)
        let request = try Self.path(PaymentTerminalProfile.paymentRequestUUID, in: world)
        _ = try world.startNotify(path: status, owner: ":1.1")
        let id = try TransactionID(bytes: Array(0..<16))
        let payment = try PaymentRequest(transactionID: id, amount: 250, currency: CurrencyCode("EUR"), reference: "A1")
        let write = try world.beginWrite(path: request, value: payment.encoded(), offset: 0, type: nil)
        let (result, batches) = world.finish(write, at: SimInstant.zero.advanced(bySeconds: 1))
        #expect(throws: Never.self) { try result.get() }
        let pending = try Self.statuses(batches.flatMap(\.events), status)
        #expect(pending.map(\.state) == [.pending])
        let later = world.advance(to: SimInstant.zero.advanced(bySeconds: 2.5)).flatMap(\.events)
        let final = try Self.statuses(later, status)
        #expect(final.map(\.state) == [.approved])
        #expect(final.first?.transactionID == id)
    }

    @Test("a Status Query written without response is answered by its indication; a malformed one is dropped")
    func statusQueryWithoutResponse() throws {
        var world = try Self.connected()
        let status = try Self.path(PaymentTerminalProfile.transactionStatusUUID, in: world)
        let query = try Self.path(PaymentTerminalProfile.statusQueryUUID, in: world)
        _ = try world.startNotify(path: status, owner: ":1.1")
        let id = try TransactionID(bytes: Array(0..<16))
        let command = try world.beginWrite(
            path: query, value: StatusQuery(transactionID: id).encoded(), offset: 0, type: "command")
        let (result, batches) = world.finish(command, at: SimInstant.zero.advanced(bySeconds: 1))
        #expect(throws: Never.self) { try result.get() }
        let answers = try Self.statuses(batches.flatMap(\.events), status)
        #expect(answers.map(\.state) == [.unknown] && answers.first?.transactionID == id)
        let malformed = try world.beginWrite(path: query, value: [0x01, 0x02], offset: 0, type: "command")
        let (dropped, none) = world.finish(malformed, at: SimInstant.zero.advanced(bySeconds: 1))
        #expect(throws: Never.self) { try dropped.get() }
        #expect(try Self.statuses(none.flatMap(\.events), status).isEmpty)
    }

    static func statuses(_ events: [AdapterEvent], _ path: String) throws -> [TransactionStatus] {
        try events.compactMap { event -> TransactionStatus? in
            guard case .objectChanged(path, _, let changed, _) = event, case .bytes(let bytes)? = changed.first?.value
            else { return nil }
            return try TransactionStatus(decoding: bytes)
        }
    }
}
