import JSON

/// (d) The control API under load: `clients` connections, each sending `agent.status` and waiting for the reply
/// (closed loop), for a few seconds; every request's latency.
struct ControlRow {
    let clients: Int
    let requests: Int
    let errors: Int
    let seconds: Double
    let p50: Double?
    let p99: Double?
    /// The agent's CPU microseconds per request.
    let agentCPU: Double?

    var rate: Double { seconds > 0 ? Double(requests) / seconds : 0 }

    var json: JSON {
        [
            "clients": .int(Int64(clients)), "method": "agent.status", "requests": .int(Int64(requests)),
            "errors": .int(Int64(errors)), "seconds": .double(seconds), "requestsPerSecond": .double(rate),
            "p50Microseconds": p50.map(JSON.double) ?? .null, "p99Microseconds": p99.map(JSON.double) ?? .null,
            "agentCpuMicrosecondsPerRequest": agentCPU.map(JSON.double) ?? .null,
        ]
    }
}

extension Bench {
    /// Runs the load with each client count on `agent` (which must have no other client connected: it serves 16).
    func controlLoad(_ agent: AgentProcess) throws -> [ControlRow] {
        try options.controlClients.map { clients in
            let socket = agent.socket
            let seconds = options.controlSeconds
            let cpu = CPUWindow([agent.pid])
            let perThread = onThreads(clients) { _ -> (latencies: [Double], errors: Int, failure: String?) in
                let request = #"{"jsonrpc":"2.0","id":1,"method":"agent.status"}"#
                var latencies: [Double] = []
                var errors = 0
                do {
                    let connection = try ControlConnection(path: socket)
                    let clock = Stopwatch()
                    while clock.seconds < seconds {
                        let start = Stopwatch.now()
                        let reply = try connection.roundTrip(request, timeout: 10)
                        latencies.append(Double(Stopwatch.now() - start) / 1000)
                        if !reply.contains(#""result""#) { errors += 1 }
                    }
                    return (latencies, errors, nil)
                } catch {
                    return (latencies, errors, "\(error)")
                }
            }
            let (used, elapsed) = cpu.end()
            if let failure = perThread.compactMap(\.failure).first { throw BenchFailure("control load: \(failure)") }
            let latencies = perThread.flatMap(\.latencies).sorted()
            let row = ControlRow(
                clients: clients, requests: latencies.count, errors: perThread.map(\.errors).reduce(0, +),
                seconds: elapsed, p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99),
                agentCPU: latencies.isEmpty ? nil : used[0] / Double(latencies.count) * 1e6)
            progress("control API, \(clients) client(s): \(Int(row.rate)) agent.status/s")
            return row
        }
    }
}
