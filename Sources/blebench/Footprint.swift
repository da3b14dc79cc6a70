import JSON
import Synchronization

/// (e) Start-up and memory: spawn to READY=1 (the role running) several times, RSS when idle, and RSS while the
/// control API's scan (`central.scan.start`, no filter, no duplicates: what an operator runs) hears a crowd of
/// devices each advertising every 10 s, with how long `central.devices` takes to list them all.
struct Footprint {
    var startMilliseconds: [Double] = []
    var idleRSS: Double = 0
    var crowd: Crowd?

    struct Crowd {
        let devices: Int
        let seconds: Double
        let offered: Double
        /// (seconds since the scan started, RSS MiB), one a second.
        let rss: [(Double, Double)]
        /// Seconds from the scan's start until `central.devices` first listed every device; nil if it never did.
        let listedAfter: Double?
        /// The most devices one `central.devices` reply listed, and the longest reply took (seconds).
        let mostListed: Int
        let slowestList: Double
        /// The agent's `central.stats` at the end of the scan: its device table and mirror with their bounds and
        /// what expired or was evicted.
        var centralStats: JSON?

        /// RSS growth over the second half of the scan, MiB a minute.
        var slope: Double {
            guard let last = rss.last, let middle = rss.first(where: { $0.0 >= last.0 / 2 }), last.0 > middle.0 else {
                return 0
            }
            return (last.1 - middle.1) / (last.0 - middle.0) * 60
        }

        var json: JSON {
            [
                "devices": .int(Int64(devices)), "seconds": .double(seconds), "offeredPerSecond": .double(offered),
                "rssMiB": .array(rss.map { [.double($0.0), .double($0.1)] }),
                "rssEndMiB": .double(rss.last?.1 ?? 0), "rssMaxMiB": .double(rss.map(\.1).max() ?? 0),
                "rssSlopeMiBPerMinute": .double(slope), "listedAllAfterSeconds": listedAfter.map(JSON.double) ?? .null,
                "mostListed": .int(Int64(mostListed)), "slowestListSeconds": .double(slowestList),
                "centralStats": centralStats ?? .null,
            ]
        }
    }

    var json: JSON {
        let sorted = startMilliseconds.sorted()
        return [
            "startMilliseconds": .array(startMilliseconds.map(JSON.double)),
            "startMedianMilliseconds": percentile(sorted, 0.5).map(JSON.double) ?? .null,
            "idleRssMiB": .double(idleRSS), "crowd": crowd?.json ?? .null,
        ]
    }
}

extension Bench {
    /// Start-up, idle RSS and, with that agent idle, the control API load (d).
    func startupAndControl() throws -> (Footprint, [ControlRow]) {
        let rig = try Rig.start(
            #"{"adapters": 1, "devices": []}"#, name: "startup", in: run, installation: installation)
        defer { rig.stop() }
        var footprint = Footprint()
        for index in 0..<options.starts - 1 {
            let agent = try AgentProcess.start(
                "start-\(index)", role: "central", adapter: "hci0", on: rig, installation: installation)
            footprint.startMilliseconds.append(agent.startMilliseconds)
            agent.stop()
        }
        let agent = try AgentProcess.start(
            "idle", role: "central", adapter: "hci0", on: rig, installation: installation)
        defer { agent.stop() }
        footprint.startMilliseconds.append(agent.startMilliseconds)
        pause(2)
        footprint.idleRSS = ProcFigures.rssMiB(agent.pid) ?? 0
        progress(
            "start-up \(footprint.startMilliseconds.map { "\(Int($0.rounded())) ms" }.joined(separator: ", ")), "
                + "idle RSS \(footprint.idleRSS) MiB")
        return (footprint, try controlLoad(agent))
    }

    /// The crowd: RSS sampled every second on one thread, `central.devices` polled on another.
    func crowd() throws -> Footprint.Crowd {
        let devices = options.crowdDevices
        let rig = try Rig.start(
            Scenarios.advertisers(devices, intervalMs: 10_000), name: "crowd", in: run, installation: installation)
        defer { rig.stop() }
        let agent = try AgentProcess.start(
            "crowd", role: "central", adapter: "hci0", on: rig, installation: installation)
        defer { agent.stop() }
        let offered0 = try rig.advertisementReports()
        _ = try agent.call("central.scan.start", [:])
        let clock = Stopwatch()
        let seconds = options.crowdSeconds
        let pid = agent.pid
        let listed = Mutex<(after: Double?, most: Int, slowest: Double)>((nil, 0, 0))
        let samples = onThreads(2) { role -> [(Double, Double)] in
            var rss: [(Double, Double)] = []
            while clock.seconds < seconds {
                if role == 0 {
                    rss.append((clock.seconds, ProcFigures.rssMiB(pid) ?? 0))
                    pause(1)
                    continue
                }
                if listed.withLock({ $0.after != nil }) { break }
                let asked = Stopwatch()
                let result = try? agent.call("central.devices", timeout: max(1, seconds - clock.seconds))
                let count = result?.objectValue?["devices"]?.arrayValue?.count ?? 0
                listed.withLock { state in
                    state.most = max(state.most, count)
                    state.slowest = max(state.slowest, asked.seconds)
                    if count >= devices { state.after = clock.seconds }
                }
                pause(0.5)
            }
            return rss
        }
        let elapsed = clock.seconds
        let offered = (try rig.advertisementReports() - offered0) / elapsed
        let outcome = listed.withLock { $0 }
        let crowd = Footprint.Crowd(
            devices: devices, seconds: elapsed, offered: offered, rss: samples[0], listedAfter: outcome.after,
            mostListed: outcome.most, slowestList: outcome.slowest,
            centralStats: try agent.call("central.stats", timeout: 60))
        progress(
            "crowd of \(devices): RSS \(crowd.rss.last?.1 ?? 0) MiB after \(Int(elapsed)) s, "
                + "listed all \(crowd.listedAfter.map { "after \(Int($0)) s" } ?? "never")")
        return crowd
    }
}
