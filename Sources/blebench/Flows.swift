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

/// What one measured flow reported: sent by the sender; received and latencies by the receiver.
private struct FlowOutcome {
    var sent = 0
    var seconds = 0.0
    var received = 0
    var p50: Double?
    var p99: Double?
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
            let pids = [peripheral.pid, central.pid]
            for pace in options.paces {
                let outcome = try measure(pids: pids, reset: { try central.call("bench.notify.window") }) {
                    let run = try peripheral.call(
                        "bench.notify.run", ["rate": .int(Int64(pace)), "seconds": .int(Int64(options.window))],
                        timeout: options.window + 30)
                    return (run, try central.call("bench.notify.window"))
                }
                rows.append(
                    row("notifications", "bleagent → bleagent", fast ? "AcquireNotify" : "StartNotify", pace, outcome))
                progress(describe(rows[rows.count - 1]))
            }
            for pace in options.paces {
                let outcome = try measure(
                    pids: [central.pid, peripheral.pid],
                    reset: {
                        try peripheral.call("bench.write.window")
                    }
                ) {
                    let run = try central.call(
                        "bench.write.run", ["rate": .int(Int64(pace)), "seconds": .int(Int64(options.window))],
                        timeout: options.window + 30)
                    return (run, try peripheral.call("bench.write.window"))
                }
                rows.append(row("writes", "bleagent → bleagent", fast ? "AcquireWrite" : "WriteValue", pace, outcome))
                progress(describe(rows[rows.count - 1]))
            }
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
        var rows: [FlowRow] = []
        for method in ["start", "acquire"] {
            _ = try bleak.ask("subscribe \(method)", expecting: "subscribed")
            for pace in options.paces {
                let outcome = try measure(
                    pids: [bless.pid, bleak.pid],
                    reset: {
                        Self.peerWindow(try bleak.ask("window", expecting: "window"))
                    }
                ) {
                    let sent = try bless.ask(
                        "notify 100000000 \(pace) \(options.window)", expecting: "sent", timeout: options.window + 30)
                    return (Self.peerRun(sent), Self.peerWindow(try bleak.ask("window", expecting: "window")))
                }
                let path = method == "start" ? "StartNotify" : "AcquireNotify"
                rows.append(row("notifications", "bless → Bleak", path, pace, outcome))
                progress(describe(rows[rows.count - 1]))
            }
            _ = try bleak.ask("unsubscribe", expecting: "unsubscribed")
        }
        for pace in options.paces {
            let outcome = try measure(
                pids: [bleak.pid, bless.pid],
                reset: {
                    Self.peerWindow(try bless.ask("window", expecting: "window"))
                }
            ) {
                let wrote = try bleak.ask(
                    "write 100000000 \(pace) \(options.window)", expecting: "wrote", timeout: options.window + 30)
                return (Self.peerRun(wrote), Self.peerWindow(try bless.ask("window", expecting: "window")))
            }
            rows.append(row("writes", "Bleak → bless", "WriteValue", pace, outcome))
            progress(describe(rows[rows.count - 1]))
        }
        return rows
    }

    /// Resets the receiver's window until half a second passes with nothing received (values of an earlier flow
    /// still queued are not counted; at most a minute), runs the flow with the CPU of [sender, receiver] measured,
    /// and returns the outcome with each side's CPU seconds.
    private func measure(
        pids: [Int32], reset: () throws -> JSON, _ flow: () throws -> (JSON, JSON)
    ) throws -> (
        FlowOutcome, [Double]
    ) {
        let draining = Stopwatch()
        _ = try reset()
        repeat { pause(0.5) } while try reset().objectValue?["count"]?.intValue ?? 0 > 0 && draining.seconds < 60
        let cpu = CPUWindow(pids)
        let (run, window) = try flow()
        let (used, _) = cpu.end()
        let result = run.objectValue
        let received = window.objectValue
        let outcome = FlowOutcome(
            sent: Int(result?["sent"]?.intValue ?? 0), seconds: result?["seconds"]?.doubleValue ?? 0,
            received: Int(received?["count"]?.intValue ?? 0), p50: received?["p50Us"]?.doubleValue,
            p99: received?["p99Us"]?.doubleValue)
        return (outcome, used)
    }

    private func row(
        _ kind: String, _ pair: String, _ path: String, _ pace: Int, _ measured: (FlowOutcome, [Double])
    )
        -> FlowRow
    {
        let (outcome, cpu) = measured
        return FlowRow(
            kind: kind, pair: pair, path: path, pace: pace, sent: outcome.sent, received: outcome.received,
            seconds: outcome.seconds, senderCPU: outcome.sent > 0 ? cpu[0] / Double(outcome.sent) * 1e6 : nil,
            receiverCPU: outcome.received > 0 ? cpu[1] / Double(outcome.received) * 1e6 : nil, p50: outcome.p50,
            p99: outcome.p99)
    }

    /// A peer's "sent N SECONDS" / "wrote N SECONDS" as the plugin's result shape.
    private static func peerRun(_ fields: [String]) -> JSON {
        ["sent": .int(Int64(fields.first ?? "") ?? 0), "seconds": .double(Double(fields.dropFirst().first ?? "") ?? 0)]
    }

    /// A peer's "window COUNT P50 P99 MAX" as the plugin's window shape.
    private static func peerWindow(_ fields: [String]) -> JSON {
        func number(_ index: Int) -> JSON {
            fields.count > index ? Double(fields[index]).map(JSON.double) ?? .null : .null
        }
        return ["count": .int(Int64(fields.first ?? "") ?? 0), "p50Us": number(1), "p99Us": number(2)]
    }

    private func describe(_ row: FlowRow) -> String {
        "\(row.kind) \(row.pair) \(row.path) \(row.pace == 0 ? "saturated" : "at \(row.pace)/s"): "
            + "\(Int(row.rate))/s, p99 \(row.p99.map { "\(Int($0)) µs" } ?? "-")"
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
