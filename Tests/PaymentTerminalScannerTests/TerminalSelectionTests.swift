import BLE
import PaymentTerminalProfile
import PaymentTerminalScanner
import Testing

@Suite struct TerminalSelectionTests {
    let policy = SelectionPolicy(
        smoothing: 0.3, thresholdDBm: -75, marginDB: 6, dwell: .seconds(3), expiry: .seconds(10))

    @Test func theNearestAboveTheThresholdIsChosen() {
        var table = TerminalTable(policy: policy)
        table.observe(id: "far", name: "Far", rssi: -80, at: .zero)
        #expect(table.selected == nil)
        table.observe(id: "mid", name: "Mid", rssi: -65, at: .milliseconds(10))
        table.observe(id: "near", name: "Near", rssi: -50, at: .milliseconds(20))
        #expect(table.terminals.map(\.id) == ["near", "mid", "far"])
        #expect(table.selected == "mid")  // first above the threshold; near must win by the margin for the dwell
        for tick in 1...40 {
            let now = Duration.milliseconds(20 + 100 * tick)
            table.observe(id: "mid", name: nil, rssi: -65, at: now)
            table.observe(id: "near", name: nil, rssi: -50, at: now)
        }
        #expect(table.selected == "near")
    }

    @Test func theFirstChoiceWaitsForTheSettlePeriodAndTakesTheNearestNotTheFirstHeard() {
        var settled = SelectionPolicy(smoothing: 0.3, thresholdDBm: -75, marginDB: 6, settle: .seconds(1))
        var table = TerminalTable(policy: settled)
        table.observe(id: "mid", name: "Mid", rssi: -65, at: .zero)
        table.tick(at: .milliseconds(500))
        #expect(table.selected == nil)  // still listening
        table.observe(id: "near", name: "Near", rssi: -50, at: .milliseconds(600))
        table.observe(id: "mid", name: nil, rssi: -65, at: .milliseconds(900))
        #expect(table.selected == nil)
        table.tick(at: .seconds(1))
        #expect(table.selected == "near")
        // Without a settle period the first heard above the threshold is chosen (and kept: near is not
        // ahead for the dwell yet).
        settled.settle = .zero
        var eager = TerminalTable(policy: settled)
        eager.observe(id: "mid", name: "Mid", rssi: -65, at: .zero)
        eager.observe(id: "near", name: "Near", rssi: -50, at: .milliseconds(600))
        eager.tick(at: .seconds(1))
        #expect(eager.selected == "mid")
    }

    @Test func twoTerminalsAtSimilarDistanceDoNotFlap() {
        var table = TerminalTable(policy: policy)
        var generator = SplitMix(seed: 3)
        var switches = 0
        var last: String?
        for tick in 0..<2000 {
            let now = Duration.milliseconds(100 * tick)
            table.observe(id: "a", name: "A", rssi: -60 + Int.random(in: -4...4, using: &generator), at: now)
            table.observe(id: "b", name: "B", rssi: -61 + Int.random(in: -4...4, using: &generator), at: now)
            if table.selected != last {
                switches += 1
                last = table.selected
            }
        }
        #expect(switches == 1)  // the first choice, then never again
    }

    @Test func aTerminalComingCloserTakesOverOnlyAfterTheDwell() {
        var table = TerminalTable(policy: policy)
        table.observe(id: "a", name: nil, rssi: -60, at: .zero)
        #expect(table.selected == "a")
        var switchedAt: Duration?
        for tick in 1...100 {
            let now = Duration.milliseconds(100 * tick)
            let rssiB = min(-45, -80 + tick)  // walks closer, then stays at -45
            table.observe(id: "a", name: nil, rssi: -60, at: now)
            table.observe(id: "b", name: nil, rssi: rssiB, at: now)
            if table.selected == "b" && switchedAt == nil { switchedAt = now }
        }
        // b's smoothed RSSI passes -54 (a + margin) at about tick 28; it must then hold it for 3 s.
        #expect(
            switchedAt.map { $0 >= .seconds(3) + .milliseconds(2600) && $0 <= .seconds(7) } == true,
            "\(String(describing: switchedAt))")
    }

    @Test func aBriefSpikeDoesNotTakeOver() {
        var table = TerminalTable(
            policy: SelectionPolicy(smoothing: 1, thresholdDBm: -75, marginDB: 6, dwell: .seconds(3)))
        table.observe(id: "a", name: nil, rssi: -60, at: .zero)
        table.observe(id: "b", name: nil, rssi: -70, at: .zero)
        for tick in 1...100 {
            let now = Duration.milliseconds(100 * tick)
            table.observe(id: "a", name: nil, rssi: -60, at: now)
            table.observe(id: "b", name: nil, rssi: tick % 20 < 15 ? -70 : -40, at: now)  // 1.5 s spikes
        }
        #expect(table.selected == "a")
    }

    @Test func staleTerminalsExpireAndTheNextIsChosen() {
        var table = TerminalTable(policy: policy)
        table.observe(id: "a", name: nil, rssi: -50, at: .zero)
        table.observe(id: "b", name: nil, rssi: -65, at: .zero)
        #expect(table.selected == "a")
        for second in 1...9 { table.observe(id: "b", name: nil, rssi: -65, at: .seconds(second)) }
        #expect(table.selected == "a")
        table.tick(at: .seconds(10))
        #expect(table.entry("a") == nil)
        #expect(table.selected == "b")
        table.tick(at: .seconds(30))
        #expect(table.selected == nil && table.terminals.isEmpty)
    }

    @Test func aTerminalFadingBelowTheThresholdIsDropped() {
        var table = TerminalTable(policy: SelectionPolicy(smoothing: 1, thresholdDBm: -75, marginDB: 6))
        table.observe(id: "a", name: nil, rssi: -70, at: .zero)
        table.observe(id: "a", name: nil, rssi: -80, at: .seconds(1))
        #expect(table.selected == "a")  // within the margin below the threshold
        table.observe(id: "a", name: nil, rssi: -82, at: .seconds(2))
        #expect(table.selected == nil)
    }

    @Test func selectPinsAndReleaseDrops() {
        var table = TerminalTable(policy: policy)
        table.observe(id: "near", name: nil, rssi: -50, at: .zero)
        table.observe(id: "far", name: nil, rssi: -90, at: .zero)
        let pinned = table.select("far", at: .zero)
        let unknown = table.select("nowhere", at: .zero)
        #expect(pinned && !unknown)
        for second in 1...9 {
            table.observe(id: "near", name: nil, rssi: -50, at: .seconds(second))
            table.observe(id: "far", name: nil, rssi: -90, at: .seconds(second))
        }
        #expect(table.selected == "far" && table.mode == .pinned("far"))
        table.release()
        table.observe(id: "near", name: nil, rssi: -50, at: .seconds(10))
        #expect(table.selected == nil && table.mode == .released)
        table.resumeAutomatic(at: .seconds(10))
        #expect(table.selected == "near")
        table.setBatteryLevel(77, for: "near")
        #expect(table.entry("near")?.batteryLevel == 77)
    }

    @Test func operatorsNameATerminalByIDTerminalIDOrName() throws {
        var table = TerminalTable(policy: policy)
        table.observe(id: "dev_AA", name: "Lane 1", rssi: -50, at: .zero)
        table.observe(id: "dev_BB", name: "Lane 2", rssi: -60, at: .zero)
        table.observe(id: "dev_CC", name: "Lane 2", rssi: -60, at: .zero)
        table.setInfo(
            try TerminalInfo(terminalID: "T-7", vendor: "", model: "", firmware: "", capabilities: []), for: "dev_BB")
        #expect(table.resolve("dev_CC") == "dev_CC")
        #expect(table.resolve("T-7") == "dev_BB")
        #expect(table.resolve("Lane 1") == "dev_AA")
        #expect(table.resolve("Lane 2") == nil)  // ambiguous
        #expect(table.resolve("nowhere") == nil)
        #expect(table.entry("dev_BB")?.info?.terminalID == "T-7")
    }

    @Test func rssiNotAvailableNeverSelectsButCanBePinnedByName() {
        // BlueZ reports HCI's "not available" (127) as Device1.RSSI = 127; btvirt always does.
        #expect(Discovery.measuredRSSI(127) == nil)
        #expect(Discovery.measuredRSSI(nil) == nil)
        #expect(Discovery.measuredRSSI(-60) == -60)
        var table = TerminalTable(policy: policy)
        for second in 0...5 {
            table.observe(id: "dev_VM", name: "VT-VM", rssi: Discovery.measuredRSSI(127), at: .seconds(second))
        }
        #expect(table.selected == nil)  // without the mapping, 127 dBm would be "the nearest terminal"
        #expect(table.entry("dev_VM")?.rssiKnown == false)
        #expect(posTerminalsJSON(table)["terminals"]?[0]?["rssi"] == .null)
        #expect(table.resolve("VT-VM") == "dev_VM")
        let pinned = table.select("dev_VM", at: .seconds(6))
        #expect(pinned)
        #expect(table.selected == "dev_VM")
        // A real RSSI later starts the smoothing from that sample, not from the placeholder.
        table.resumeAutomatic(at: .seconds(7))
        table.observe(id: "dev_VM", name: nil, rssi: -60, at: .seconds(7))
        #expect(table.entry("dev_VM")?.smoothedRSSI == -60)
        #expect(table.selected == "dev_VM")
    }

    @Test func aConnectedTerminalThatStopsAdvertisingDoesNotExpire() {
        var table = TerminalTable(policy: policy)  // expiry 10 s
        table.observe(id: "T", name: "Lane", rssi: -50, at: .zero)
        #expect(table.selected == "T")
        // Connected from t = 1 s: no advertisement any more, the link touches it every tick.
        for second in 1...30 {
            table.touch("T", at: .seconds(second))
            table.tick(at: .seconds(second))
        }
        #expect(table.selected == "T")
        // Link gone, still silent: it expires as before.
        table.tick(at: .seconds(41))
        #expect(table.selected == nil && table.entry("T") == nil)
        table.touch("T", at: .seconds(42))  // touching an unknown terminal adds nothing
        #expect(table.entry("T") == nil)
    }
}
