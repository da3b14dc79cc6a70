import Glibc
import JSON

/// Everything one run measured.
struct Results {
    var ingest: [IngestRow] = []
    var flows: [FlowRow] = []
    var control: [ControlRow] = []
    var footprint: Footprint?
    var crowd: Footprint.Crowd?
    var machine: JSON = [:]

    var json: JSON {
        var footprintJSON = footprint?.json ?? .null
        if case .object(var object) = footprintJSON, let crowd {
            object["crowd"] = crowd.json
            footprintJSON = .object(object)
        } else if footprint == nil, let crowd {
            footprintJSON = ["crowd": crowd.json]
        }
        return [
            "tool": "blebench", "machine": machine, "ingest": .array(ingest.map(\.json)),
            "flows": .array(flows.map(\.json)), "control": .array(control.map(\.json)), "footprint": footprintJSON,
        ]
    }

    /// blesim's share of a core from which an ingest row marks it saturated (its "offered" then rough).
    static let saturatedBlesim = 0.9

    /// The tables, as printed and as docs/benchmarks.md keeps them (Markdown).
    func tables() -> String {
        var out: [String] = []
        if !ingest.isEmpty {
            out.append("Advertisement ingest (duplicates on; each client alone in its window)\n")
            out.append(
                table(
                    [
                        "advertisers", "interval ms", "scheduled/s", "client", "offered/s", "handled/s", "handled",
                        "CPU µs/report", "vs Bleak", "RSS MiB", "blesim CPU",
                    ],
                    ingest.map { row in
                        let bleak = ingest.first {
                            $0.devices == row.devices && $0.intervalMs == row.intervalMs && $0.client == "Bleak"
                        }?.cpuPerReport
                        let ratio = row.cpuPerReport.flatMap { mine in bleak.map { mine / $0 } }
                        return [
                            "\(row.devices)", fixed(row.intervalMs, 1), whole(row.scheduled), row.client,
                            whole(row.offered), whole(row.handled),
                            row.offered > 0 ? "\(Int((row.handled / row.offered * 100).rounded()))%" : "-",
                            fixed(row.cpuPerReport, 2), ratio.map { "\(fixed($0, 2))×" } ?? "-",
                            "\(fixed(row.rss.start, 1)) → \(fixed(row.rss.end, 1))",
                            "\(Int((row.blesimCores * 100).rounded()))%"
                                + (row.blesimCores >= Self.saturatedBlesim ? " (saturated)" : ""),
                        ]
                    }))
        }
        if !flows.isEmpty {
            out.append("\nNotifications (peripheral → central) and writes without response (central → peripheral)\n")
            out.append(
                table(
                    [
                        "flow", "pair", "path", "offered", "sent/s", "received/s", "sender CPU µs", "receiver CPU µs",
                        "p50 µs", "p99 µs",
                    ],
                    flows.map { row in
                        [
                            row.kind, row.pair, row.path, row.pace == 0 ? "saturated" : "\(row.pace)/s",
                            whole(row.sentRate),
                            whole(row.rate),
                            fixed(row.senderCPU, 1), fixed(row.receiverCPU, 1), fixed(row.p50, 0), fixed(row.p99, 0),
                        ]
                    }))
        }
        if !control.isEmpty {
            out.append("\nControl API (agent.status, closed loop per client)\n")
            out.append(
                table(
                    ["clients", "requests/s", "p50 µs", "p99 µs", "agent CPU µs/request", "errors"],
                    control.map { row in
                        [
                            "\(row.clients)", whole(row.rate), fixed(row.p50, 0), fixed(row.p99, 0),
                            fixed(row.agentCPU, 1),
                            "\(row.errors)",
                        ]
                    }))
        }
        if footprint != nil || crowd != nil {
            out.append("\nStart-up and memory\n")
            var rows: [[String]] = []
            if let footprint {
                let sorted = footprint.startMilliseconds.sorted()
                rows.append([
                    "start-up to READY=1 (role running)",
                    "median \(fixed(percentile(sorted, 0.5), 1)) ms (\(fixed(sorted.first, 1))–\(fixed(sorted.last, 1)), "
                        + "\(sorted.count) starts)",
                ])
                rows.append(["RSS idle (central, Bench plugin)", "\(fixed(footprint.idleRSS, 1)) MiB"])
            }
            if let crowd {
                rows.append([
                    "RSS scanning \(crowd.devices) devices (\(whole(crowd.offered)) reports/s offered)",
                    "\(fixed(crowd.rss.last?.1, 1)) MiB after \(Int(crowd.seconds)) s (max \(fixed(crowd.rss.map(\.1).max(), 1)), "
                        + "\(fixed(crowd.slope, 1)) MiB/min over the second half)",
                ])
                rows.append([
                    "central.devices lists all \(crowd.devices)",
                    crowd.listedAfter.map { "after \(fixed($0, 1)) s of scanning" }
                        ?? "not within \(Int(crowd.seconds)) s (at most \(crowd.mostListed) listed; slowest reply \(fixed(crowd.slowestList, 1)) s)",
                ])
            }
            out.append(table(["measure", "bleagent"], rows))
        }
        return out.joined(separator: "\n")
    }

    private func table(_ header: [String], _ rows: [[String]]) -> String {
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        func line(_ cells: [String]) -> String {
            "| "
                + zip(cells, widths).map { $0 + String(repeating: " ", count: max(0, $1 - $0.count)) }.joined(
                    separator: " | ")
                + " |"
        }
        return
            ([line(header), "|" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "|") + "|"]
            + rows.map(line)).joined(separator: "\n")
    }
}

/// "12,345" (rounded).
func whole(_ value: Double) -> String {
    let digits = String(Int(value.rounded()))
    var out = ""
    for (index, character) in digits.reversed().enumerated() {
        if index > 0, index % 3 == 0, character != "-" { out.append(",") }
        out.append(character)
    }
    return String(out.reversed())
}

/// `value` with `places` decimals, "-" for nil.
func fixed(_ value: Double?, _ places: Int) -> String {
    guard let value, value.isFinite else { return "-" }
    var scale = 1.0
    for _ in 0..<places { scale *= 10 }
    let rounded = (value * scale).rounded() / scale
    guard places > 0 else { return whole(rounded) }
    let integer = Int(rounded.magnitude)
    let fraction = Int(((rounded.magnitude - Double(integer)) * scale).rounded())
    let padded = String(repeating: "0", count: max(0, places - String(fraction).count)) + String(fraction)
    return (rounded < 0 ? "-" : "") + whole(Double(integer)) + "." + padded
}

/// The machine and its load, for the record: CPU model, cores, memory, kernel, load averages.
func machineJSON(loadAtStart: String) -> JSON {
    let cpuinfo = readText("/proc/cpuinfo") ?? ""
    let model =
        cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
        .map { String($0.split(separator: ":", maxSplits: 1).last ?? "").trimmingCharacters(in: " ") } ?? "?"
    let memory =
        (readText("/proc/meminfo") ?? "").split(separator: "\n").first { $0.hasPrefix("MemTotal") }
        .flatMap { $0.split(separator: " ").dropFirst().first.flatMap { Double($0) } } ?? 0
    var name = utsname()
    uname(&name)
    let release = withUnsafeBytes(of: name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    return [
        "cpu": .string(model), "cores": .int(Int64(sysconf(Int32(_SC_NPROCESSORS_ONLN)))),
        "memoryGiB": .double((memory / 1024 / 1024 * 10).rounded() / 10), "kernel": .string(release),
        "loadAverageAtStart": .string(loadAtStart), "loadAverageAtEnd": .string(loadAverage()),
    ]
}

/// /proc/loadavg's first three figures.
func loadAverage() -> String {
    (readText("/proc/loadavg") ?? "").split(separator: " ").prefix(3).joined(separator: " ")
}
