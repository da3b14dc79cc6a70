import GATT
import SimCore
import Testing

/// The link model's arithmetic and the cap it puts on a link's notifications.
@Suite("the link model")
struct LinkModelTests {
    @Test("air time per PDU on each PHY (preamble, access address, header, payload, CRC; Coded S=8)")
    func airTime() {
        #expect(LinkModel(phy: .le1M).airMicroseconds(payload: 0) == 80)
        #expect(LinkModel(phy: .le1M).airMicroseconds(payload: 27) == 296)
        #expect(LinkModel(phy: .le2M).airMicroseconds(payload: 27) == 152)
        #expect(LinkModel(phy: .coded).airMicroseconds(payload: 0) == 720)
        #expect(LinkModel(phy: .coded).airMicroseconds(payload: 27) == 2448)
        #expect(LinkModel(phy: .le1M).exchangeMicroseconds(payload: 27) == 296 + 150 + 80 + 150)
    }

    @Test("an ATT PDU is cut into LL PDUs of the data length, with its 4-byte L2CAP header")
    func fragments() {
        #expect(LinkModel(dataLength: 251).fragments(attBytes: 23) == [27])
        #expect(LinkModel(dataLength: 27).fragments(attBytes: 247) == [27, 27, 27, 27, 27, 27, 27, 27, 27, 8])
        #expect(LinkModel.attBytes(valueLength: 500, mtu: 247) == 247)
        #expect(LinkModel.attBytes(valueLength: 20, mtu: 247) == 23)
    }

    @Test("the rate is the lower of the packet limit and the air-time limit")
    func rates() {
        // 30 ms, 6 packets per event, one PDU per notification: 6 x 33.3 = 200/s (air allows 1,479/s).
        #expect(abs(LinkModel().maxPerSecond(valueLength: 20, mtu: 247) - 200) < 1e-9)
        // 7.5 ms on 2M: 6 x 133.3 = 800/s.
        let fast = LinkModel(connectionIntervalMs: 7.5, phy: .le2M)
        #expect(abs(fast.maxPerSecond(valueLength: 20, mtu: 247) - 800) < 1e-9)
        // A 244-byte value without Data Length Extension takes 10 PDUs: 6 x 133.3 / 10 = 80/s.
        let long = LinkModel(connectionIntervalMs: 7.5, dataLength: 27)
        #expect(abs(long.maxPerSecond(valueLength: 244, mtu: 247) - 80) < 1e-9)
        // Coded, 64 packets per 7.5 ms event: the air is the limit, 1 s / 3,468 µs.
        let coded = LinkModel(connectionIntervalMs: 7.5, phy: .coded, maxPacketsPerEvent: 64, dataLength: 27)
        #expect(abs(coded.maxPerSecond(valueLength: 20, mtu: 247) - 1_000_000 / 3468) < 1e-9)
        #expect(LinkModel().burst(valueLength: 20, mtu: 247) == 6)
    }

    @Test("a budget lets a burst go, then one value per 1/rate")
    func budget() {
        let model = LinkModel(connectionIntervalMs: 100, maxPacketsPerEvent: 1)  // 10/s, burst 1
        var budget = LinkBudget(tokens: 1, at: .zero)
        var sent = 0
        for millisecond in 0..<10_000
        where budget.take(model, valueLength: 2, mtu: 247, at: .milliseconds(Int64(millisecond))) {
            sent += 1
        }
        #expect(sent >= 99 && sent <= 101)
    }

    @Test("a world with a link model drops notifications over the link's rate; without one it sends them all")
    func worldCap() throws {
        func notifications(link: String) throws -> Int {
            let text = """
                { \(link) "devices": [ { "address": "C0:00:00:00:00:01", "rssi": { "distance": 1 },
                  "gatt": { "services": [ { "uuid": "180D", "characteristics": [
                    { "uuid": "2A37", "flags": ["notify"], "value": "00",
                      "behaviour": { "cycle": ["01", "02"], "everyMs": 1 } } ] } ] } } ] }
                """
            var world = try ScheduledFaultsTests.connected(text)
            let path = "/org/bluez/hci0/dev_C0_00_00_00_00_01/service000a/char000b"
            _ = try world.startNotify(path: path, owner: ":1.1")
            var count = 0
            for millisecond in 101...2100 {
                for event in world.advance(to: .milliseconds(Int64(millisecond))).flatMap(\.events) {
                    if case .objectChanged(path, _, let changed, _) = event, changed.first?.name == "Value" {
                        count += 1
                    }
                }
            }
            return count
        }
        #expect(try notifications(link: "") >= 1900)
        // 100 ms, one packet per event: at most 10/s, over 2 s 20 and the first token.
        let capped = try notifications(link: #""link": { "intervalMs": 100, "packetsPerEvent": 1 },"#)
        #expect(capped >= 19 && capped <= 21)
    }

    @Test("write commands reach the device at the link's rate (queued, never dropped); without a model at once")
    func pacedWrites() throws {
        func world(link: String) throws -> SimWorld {
            try ScheduledFaultsTests.connected(
                """
                { \(link) "devices": [ { "address": "C0:00:00:00:00:01", "rssi": { "distance": 1 },
                  "gatt": { "services": [ { "uuid": "1234", "characteristics": [
                    { "uuid": "2A00", "flags": ["read", "write-without-response"], "value": "00" } ] } ] } } ] }
                """)
        }
        let path = "/org/bluez/hci0/dev_C0_00_00_00_00_01/service000a/char000b"
        func send(_ world: inout SimWorld) throws {
            for index in 1...30 {
                let operation = try world.beginWrite(path: path, value: [UInt8(index)], offset: 0, type: "command")
                #expect(world.finish(operation).0 == .success([]))
            }
        }
        var free = try world(link: "")
        try send(&free)
        #expect(try free.servers[0]?.read(0x000c) == [30])
        // 100 ms, one packet per event: 10/s. The first goes at once, the 11th 1 s later.
        var paced = try world(link: #""link": { "intervalMs": 100, "packetsPerEvent": 1 },"#)
        try send(&paced)
        #expect(try paced.servers[0]?.read(0x000c) == [0])
        _ = paced.advance(to: .seconds(0.1))
        #expect(try paced.servers[0]?.read(0x000c) == [1])
        _ = paced.advance(to: .seconds(1.1))
        #expect(try paced.servers[0]?.read(0x000c) == [11])
        #expect(paced.nextDeadline != nil)
        _ = paced.advance(to: .seconds(3.05))
        #expect(try paced.servers[0]?.read(0x000c) == [30])
    }

    @Test("link options: scenario `link` and --link, with errors that name the field")
    func options() throws {
        let model = try #require(
            try Scenario.parse(
                #"{ "link": { "intervalMs": 7.5, "phy": "2M", "packetsPerEvent": 4, "dataLength": 27 } }"#
            )
            .link)
        #expect(model == LinkModel(connectionIntervalMs: 7.5, phy: .le2M, maxPacketsPerEvent: 4, dataLength: 27))
        #expect(try Scenario.parse("{}").link == nil)
        #expect(throws: ScenarioError(path: "link.phy", message: #"expected "1M", "2M" or "coded""#)) {
            try Scenario.parse(#"{ "link": { "phy": "3M" } }"#)
        }
        let options = try SimOptions.parse(["--link", "interval=15,phy=coded,packets=2,length=100"])
        #expect(
            options.link == LinkModel(connectionIntervalMs: 15, phy: .coded, maxPacketsPerEvent: 2, dataLength: 100))
        #expect(options.applied(to: try Scenario.parse("{}")).link == options.link)
        #expect(throws: SimOptions.UsageError.self) { try SimOptions.parse(["--link", "interval=1"]) }
        #expect(throws: SimOptions.UsageError.self) { try SimOptions.parse(["--link", "colour=red"]) }
    }
}
