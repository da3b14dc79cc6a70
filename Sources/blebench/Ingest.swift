import JSON

/// (a) Advertisement ingest: N advertisers offering R reports a second between them (each advertising every
/// N / R seconds on average, advDelay included), duplicates on; the agent (Bench plugin, one scan with
/// allowDuplicates) and Bleak's BleakScanner (DuplicateData) each scan alone in their own window on the same
/// blesim, so neither takes CPU from the other.
struct IngestRow {
    let devices: Int
    /// Each advertiser's interval (milliseconds), before the advDelay BLE adds to each event.
    let intervalMs: Double
    let client: String
    /// Reports blesim put on the bus per second during the window.
    let offered: Double
    /// Reports the client handled per second.
    let handled: Double
    /// The client's CPU microseconds per report handled.
    let cpuPerReport: Double?
    /// The client's RSS at the start and the end of the window (MiB).
    let rss: (start: Double, end: Double)
    let seconds: Double
    /// The cores blesim used during the window (1.0: one whole core). Near 1, blesim is saturated: it counts
    /// reports it has made but not yet written to the bus, so "offered" runs ahead of what the bus brought.
    let blesimCores: Double
    /// The agent's `central.stats` at the end of its window (its queues' merged and dropped counts); nil for Bleak.
    var centralStats: JSON?

    /// The reports a second the advertisers' schedule asks of blesim, the mean advDelay included.
    var scheduled: Double { Double(devices) * 1000 / (intervalMs + Scenarios.meanAdvertisingDelayMs) }

    var json: JSON {
        [
            "devices": .int(Int64(devices)), "intervalMs": .double(intervalMs),
            "scheduledPerSecond": .double(scheduled), "client": .string(client), "offeredPerSecond": .double(offered),
            "handledPerSecond": .double(handled), "cpuMicrosecondsPerReport": cpuPerReport.map(JSON.double) ?? .null,
            "rssStartMiB": .double(rss.start), "rssEndMiB": .double(rss.end), "seconds": .double(seconds),
            "blesimCores": .double(blesimCores),
            "centralStats": centralStats ?? .null,
        ]
    }
}

extension Bench {
    /// The rows of `devices` advertisers offering `rate` reports a second between them: the agent's, then Bleak's.
    func ingest(devices: Int, rate: Int) throws -> [IngestRow] {
        let intervalMs = try Scenarios.advertisingIntervalMs(devices: devices, rate: rate)
        let rig = try Rig.start(
            Scenarios.advertisers(devices, intervalMs: intervalMs), name: "ingest-\(devices)-\(rate)", in: run,
            installation: installation)
        defer { rig.stop() }
        var rows: [IngestRow] = []

        let agent = try AgentProcess.start(
            "agent", role: "central", adapter: "hci0", on: rig, installation: installation)
        do {
            defer { agent.stop() }
            _ = try agent.call("bench.scan.start", ["allowDuplicates": true])
            var row = try window(devices: devices, intervalMs: intervalMs, client: "bleagent", pid: agent.pid, rig: rig)
            {
                try agent.call("bench.scan.count", timeout: 60).objectValue?["reports"]?.intValue.map(Double.init) ?? 0
            }
            row.centralStats = try agent.call("central.stats", timeout: 60)
            rows.append(row)
            _ = try? agent.call("bench.scan.stop", timeout: 10)
        }
        progress(
            "ingest \(devices) at \(rate)/s: bleagent \(Int(rows[0].handled))/s of \(Int(rows[0].offered))/s offered"
                + Self.scanQueueSummary(rows[0].centralStats))

        let bleak = try Peer(
            "bleak-scan", script: "bleak_peer.py", arguments: ["hci0"], on: rig, installation: installation)
        defer { bleak.stop() }
        _ = try bleak.ask("scan", expecting: "scanning")
        rows.append(
            try window(devices: devices, intervalMs: intervalMs, client: "Bleak", pid: bleak.pid, rig: rig) {
                Double(try bleak.ask("count", expecting: "count", timeout: 60).first ?? "") ?? 0
            })
        _ = try? bleak.ask("unscan", expecting: "unscanned")
        progress("ingest \(devices) at \(rate)/s: Bleak \(Int(rows[1].handled))/s of \(Int(rows[1].offered))/s offered")
        return rows
    }

    /// "; scan queue: N merged, M dropped" from `central.stats`, for the progress line.
    static func scanQueueSummary(_ stats: JSON?) -> String {
        guard let scans = stats?.objectValue?["manager"]?.objectValue?["scans"]?.objectValue else { return "" }
        let merged = scans["merged"]?.intValue ?? 0
        let dropped = scans["dropped"]?.intValue ?? 0
        return "; scan queue: \(merged) reports merged, \(dropped) dropped"
    }

    /// After the warm-up, the client's report count, its CPU and blesim's count at both ends of the window.
    private func window(
        devices: Int, intervalMs: Double, client: String, pid: Int32, rig: Rig, count: () throws -> Double
    ) throws
        -> IngestRow
    {
        pause(options.warmup)
        let handled0 = try count()
        let offered0 = try rig.advertisementReports()
        let rss0 = ProcFigures.rssMiB(pid) ?? 0
        let cpu = CPUWindow([pid, rig.blesim])
        pause(options.window)
        let handled1 = try count()
        let (used, seconds) = cpu.end()
        let offered1 = try rig.advertisementReports()
        let handled = handled1 - handled0
        return IngestRow(
            devices: devices, intervalMs: intervalMs, client: client, offered: (offered1 - offered0) / seconds,
            handled: handled / seconds,
            cpuPerReport: handled > 0 ? used[0] / handled * 1e6 : nil, rss: (rss0, ProcFigures.rssMiB(pid) ?? 0),
            seconds: seconds, blesimCores: used[1] / seconds)
    }
}
