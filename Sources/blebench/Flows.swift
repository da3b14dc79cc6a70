import JSON

/// (b) and (c): notifications peripheral → central and writes without response central → peripheral, between two
/// agents (the Bench plugin on both sides, through the plugin API) and between bless and Bleak, on two adapters of
/// one blesim without its link model (the cost of the software, not of a radio). Each flow runs saturated (as fast
/// as the sender's flow control lets it) and paced at a fixed rate (for latency when not saturated).
struct FlowRow {
    /// "notifications" or "writes".
    let kind: String
    /// "bleagent → bleagent", "bless → Bleak", "Bleak → bless".
    let pair: String
    /// "StartNotify", "AcquireNotify", "WriteValue", "AcquireWrite".
    let path: String
    /// Offered a second; 0: saturated.
    let pace: Int
    let sent: Int
    let received: Int
    let seconds: Double
    /// CPU microseconds per value sent (sender) and per value received (receiver).
    let senderCPU: Double?
    let receiverCPU: Double?
    /// Latency send → receive, microseconds.
    let p50: Double?
    let p99: Double?

    var rate: Double { seconds > 0 ? Double(received) / seconds : 0 }
    var sentRate: Double { seconds > 0 ? Double(sent) / seconds : 0 }

    var json: JSON {
        [
            "kind": .string(kind), "pair": .string(pair), "path": .string(path), "offeredPerSecond": .int(Int64(pace)),
            "sent": .int(Int64(sent)), "received": .int(Int64(received)), "seconds": .double(seconds),
            "receivedPerSecond": .double(rate),
            "senderCpuMicrosecondsPerValue": senderCPU.map(JSON.double) ?? .null,
            "receiverCpuMicrosecondsPerValue": receiverCPU.map(JSON.double) ?? .null,
            "p50Microseconds": p50.map(JSON.double) ?? .null, "p99Microseconds": p99.map(JSON.double) ?? .null,
        ]
    }
}

/// One flow to measure: who sends, who receives, how to run it at a pace and how to read (and reset) the
/// receiver's window. Both ends answer in the Bench plugin's shapes (`sent`/`seconds`; `count`/`p50Us`/`p99Us`).
private struct Flow {
    let kind: String
    let pair: String
    let path: String
    let sender: Int32
    let receiver: Int32
    /// The rig's processes (blesim, the bus): a row starts once they and both ends are idle.
    let rig: [Int32]
    let run: (_ pace: Int) throws -> JSON
    let window: () throws -> JSON
}

extension Bench {
    /// Agent → agent: a peripheral agent on hci0, then for each central mode (the fast paths off: StartNotify and
    /// WriteValue; on: AcquireNotify and AcquireWrite) a central agent on hci1.
    func agentFlows() throws -> [FlowRow] {
        let rig = try Rig.start(Scenarios.twoAdapters, name: "flows-agent", in: run, installation: installation)
        defer { rig.stop() }
        let peripheral = try AgentProcess.start(
            "peripheral", role: "peripheral", adapter: "hci0", on: rig, installation: installation)
        defer { peripheral.stop() }
        try waitFor("the bench service published", seconds: 30) {
            try peripheral.call("bench.state").objectValue?["published"] == .bool(true)
        }
        var rows: [FlowRow] = []
        for fast in [false, true] {
            let central = try AgentProcess.start(
                fast ? "central-acquire" : "central-plain", role: "central", adapter: "hci1",
                bluez: ["acquireNotify": .bool(fast), "acquireWrite": .bool(fast)], on: rig, installation: installation)
            defer { central.stop() }
            _ = try central.call("bench.connect", timeout: 60)
            _ = try central.call("bench.notify.subscribe")
            try waitFor("the central subscribed", seconds: 30) {
                try peripheral.call("bench.state").objectValue?["subscribers"]?.intValue ?? 0 > 0
            }
            let window = options.window
            func sending(_ agent: AgentProcess, _ method: String) -> (Int) throws -> JSON {
                { pace in
                    try agent.call(
                        method, ["rate": .int(Int64(pace)), "seconds": .int(Int64(window))], timeout: window + 30)
                }
            }
            rows += try measure(
                Flow(
                    kind: "notifications", pair: "bleagent → bleagent", path: fast ? "AcquireNotify" : "StartNotify",
                    sender: peripheral.pid, receiver: central.pid, rig: rig.pids,
                    run: sending(peripheral, "bench.notify.run"),
                    window: { try central.call("bench.notify.window") }))
            rows += try measure(
                Flow(
                    kind: "writes", pair: "bleagent → bleagent", path: fast ? "AcquireWrite" : "WriteValue",
                    sender: central.pid, receiver: peripheral.pid, rig: rig.pids,
                    run: sending(central, "bench.write.run"),
                    window: { try peripheral.call("bench.write.window") }))
        }
        return rows
    }

    /// bless → Bleak (StartNotify and AcquireNotify, Bleak's `use_start_notify`; bless_peer.py adds the flow
    /// control bless lacks) and Bleak → bless (Bleak's write without response, WriteValue type command, each
    /// awaited).
    func peerFlows() throws -> [FlowRow] {
        let rig = try Rig.start(Scenarios.twoAdapters, name: "flows-peers", in: run, installation: installation)
        defer { rig.stop() }
        let bless = try Peer("bless", script: "bless_peer.py", arguments: ["hci0"], on: rig, installation: installation)
        defer { bless.stop() }
        let bleak = try Peer(
            "bleak-central", script: "bleak_peer.py", arguments: ["hci1"], on: rig, installation: installation)
        defer { bleak.stop() }
        _ = try bleak.ask("connect", expecting: "connected", timeout: 90)
        let seconds = options.window
        /// A peer's "sent N SECONDS" / "wrote N SECONDS" in the plugin's result shape.
        func sending(_ peer: Peer, _ command: String, _ word: String) -> (Int) throws -> JSON {
            { pace in
                let fields = try peer.ask(
                    "\(command) 100000000 \(pace) \(seconds)", expecting: word, timeout: seconds + 30)
                return [
                    "sent": .int(Int64(fields.first ?? "") ?? 0),
                    "seconds": .double(Double(fields.dropFirst().first ?? "") ?? 0),
                ]
            }
        }
        /// A peer's "window COUNT P50 P99 MAX" in the plugin's window shape.
        func windowOf(_ peer: Peer) -> () throws -> JSON {
            {
                let fields = try peer.ask("window", expecting: "window")
                func number(_ index: Int) -> JSON {
                    fields.count > index ? Double(fields[index]).map(JSON.double) ?? .null : .null
                }
                return ["count": .int(Int64(fields.first ?? "") ?? 0), "p50Us": number(1), "p99Us": number(2)]
            }
        }
        var rows: [FlowRow] = []
        for method in ["start", "acquire"] {
            _ = try bleak.ask("subscribe \(method)", expecting: "subscribed")
            rows += try measure(
                Flow(
                    kind: "notifications", pair: "bless → Bleak",
                    path: method == "start" ? "StartNotify" : "AcquireNotify",
                    sender: bless.pid, receiver: bleak.pid, rig: rig.pids,
                    run: sending(bless, "notify", "sent"),
                    window: windowOf(bleak)))
            _ = try bleak.ask("unsubscribe", expecting: "unsubscribed")
        }
        rows += try measure(
            Flow(
                kind: "writes", pair: "Bleak → bless", path: "WriteValue", sender: bleak.pid, receiver: bless.pid,
                rig: rig.pids, run: sending(bleak, "write", "wrote"), window: windowOf(bless)))
        return rows
    }

    /// `flow` saturated and paced: for each, resets the receiver's window until half a second passes with
    /// nothing received (values of an earlier flow still queued are not counted; at most a minute) and waits
    /// for the rig to settle (``settle(_:)``), then runs it with the CPU of both ends measured.
    private func measure(_ flow: Flow) throws -> [FlowRow] {
        try options.paces.map { pace in
            let draining = Stopwatch()
            _ = try flow.window()
            repeat {
                pause(0.5)
            } while try flow.window().objectValue?["count"]?.intValue ?? 0 > 0
                && draining.seconds < 60
            settle([flow.sender, flow.receiver] + flow.rig)
            _ = try flow.window()
            let cpu = CPUWindow([flow.sender, flow.receiver])
            let result = try flow.run(pace).objectValue
            let received = try flow.window().objectValue
            let (used, _) = cpu.end()
            let sent = Int(result?["sent"]?.intValue ?? 0)
            let count = Int(received?["count"]?.intValue ?? 0)
            let row = FlowRow(
                kind: flow.kind, pair: flow.pair, path: flow.path, pace: pace, sent: sent, received: count,
                seconds: result?["seconds"]?.doubleValue ?? 0, senderCPU: sent > 0 ? used[0] / Double(sent) * 1e6 : nil,
                receiverCPU: count > 0 ? used[1] / Double(count) * 1e6 : nil, p50: received?["p50Us"]?.doubleValue,
                p99: received?["p99Us"]?.doubleValue)
            progress(
                "\(row.kind) \(row.pair) \(row.path) \(pace == 0 ? "saturated" : "at \(pace)/s"): "
                    + "\(Int(row.rate))/s, p99 \(row.p99.map { "\(Int($0)) µs" } ?? "-")")
            return row
        }
    }
}

/// Waits until `pids` together use less than a twentieth of a core over a quarter of a second (at most 20 s).
/// A saturated row leaves work behind it (queues in the bus, timers and buffers in blesim and the ends) that
/// goes on after its receiver hears nothing more; a paced row started on top of it measures that work's
/// interference, not the flow.
func settle(_ pids: [Int32]) {
    let waiting = Stopwatch()
    while waiting.seconds < 20 {
        let window = CPUWindow(pids)
        pause(0.25)
        let (used, seconds) = window.end()
        if used.reduce(0, +) < 0.05 * seconds { return }
    }
}

/// Polls `condition` every 50 ms until it holds; fails after `seconds`.
func waitFor(_ what: String, seconds: Double, _ condition: () throws -> Bool) throws {
    let clock = Stopwatch()
    while clock.seconds < seconds {
        if try condition() { return }
        pause(0.05)
    }
    throw BenchFailure("\(what): not within \(seconds) s")
}
