import Glibc

/// blebench's command line.
struct Options {
    static let usage = """
        usage: blebench [options]    (build first: see docs/benchmarks.md)
          --sections LIST        which sections run, of ingest,flows,control,crowd (default: all)
          --ingest-devices LIST  advertisers in the ingest rows (default 1000,2000)
          --ingest-rates LIST    reports a second they offer between them, a row each (default 10000,20000,40000)
          --warmup S             seconds each ingest client scans before its window (default 2)
          --window S             seconds of each measured window (default 5)
          --pace LIST            the paced rates of the notification and write rows, a second (default 1000,5000)
          --control-clients LIST concurrent control API clients (default 1,16)
          --control-seconds S    seconds of each control API row (default 3)
          --starts N             agent start-ups timed (default 5)
          --crowd-devices N      devices in range for the memory row, each advertising every 10 s (default 10000)
          --crowd-seconds S      seconds the agent scans them (default 60; 300 for the 5-minute flat-RSS check)
          --json PATH            where the results go (default .build/blebench/results.json)
          --plot PATH            the ingest plot, PNG (default .build/blebench/ingest.png; "" for none)
          --release DIR          bleagent, blesim, libBench.so (default: the directory of this executable)
          --python PATH          the bench venv's python (default .build/venv-bench/bin/python)
          --timeout S            the whole run's limit; past it every process started is killed (default 900)
          --keep                 keep the temporary directory (configs, logs of every process) and say where
        """

    var sections: Set<String> = ["ingest", "flows", "control", "crowd"]
    var ingestDevices = [1000, 2000]
    var ingestRates = [10_000, 20_000, 40_000]
    var warmup = 2.0
    var window = 5.0
    var pace = [1000, 5000]
    var controlClients = [1, 16]
    var controlSeconds = 3.0
    var starts = 5
    var crowdDevices = 10_000
    var crowdSeconds = 60.0
    var json: String?
    var plot: String?
    var release: String?
    var python: String?
    var timeout = 900.0
    var keep = false

    /// The flows' paces: saturated (0), then the paced rates.
    var paces: [Int] { [0] + pace }

    init(_ arguments: [String]) throws {
        var rest = arguments[...]
        while let flag = rest.popFirst() {
            if flag == "--help" || flag == "-h" { throw BenchFailure(Self.usage) }
            if flag == "--keep" {
                keep = true
                continue
            }
            guard let value = rest.popFirst() else { throw BenchFailure("\(flag) needs a value\n\(Self.usage)") }
            func number(_ range: ClosedRange<Double>) throws -> Double {
                guard let number = Double(value), range.contains(number) else {
                    throw BenchFailure("\(flag): expected a number from \(range.lowerBound) to \(range.upperBound)")
                }
                return number
            }
            func list(_ range: ClosedRange<Int>) throws -> [Int] {
                let numbers = value.split(separator: ",").compactMap { Int($0) }
                guard !numbers.isEmpty, numbers.allSatisfy(range.contains) else {
                    throw BenchFailure("\(flag): expected a comma-separated list of integers from \(range)")
                }
                return numbers
            }
            switch flag {
            case "--sections":
                let names = Set(value.split(separator: ",").map(String.init))
                let unknown = names.subtracting(["ingest", "flows", "control", "crowd"])
                guard unknown.isEmpty, !names.isEmpty else {
                    throw BenchFailure("--sections: unknown \(unknown.sorted())")
                }
                sections = names
            case "--ingest-devices": ingestDevices = try list(1...100_000)
            case "--ingest-rates": ingestRates = try list(1...10_000_000)
            case "--warmup": warmup = try number(0...600)
            case "--window": window = try number(1...3600)
            case "--pace": pace = try list(1...1_000_000)
            case "--control-clients": controlClients = try list(1...16)
            case "--control-seconds": controlSeconds = try number(0.5...3600)
            case "--starts": starts = Int(try number(1...1000))
            case "--crowd-devices": crowdDevices = Int(try number(1...100_000))
            case "--crowd-seconds": crowdSeconds = try number(1...86_400)
            case "--json": json = value
            case "--plot": plot = value
            case "--release": release = value
            case "--python": python = value
            case "--timeout": timeout = try number(10...86_400)
            default: throw BenchFailure("unknown option \(flag)\n\(Self.usage)")
            }
        }
        if sections.contains("ingest") {
            for devices in ingestDevices {
                for rate in ingestRates { _ = try Scenarios.advertisingIntervalMs(devices: devices, rate: rate) }
            }
        }
    }
}

/// blebench's one run: options, what it runs, its temporary directory.
struct Bench: Sendable {
    let options: Options
    let installation: Installation
    let run: RunDirectory
}

/// One line of progress on standard error, with the run's elapsed seconds.
func progress(_ line: String) {
    let elapsed = Int(runClock.seconds)
    printError("[\(elapsed / 60):\(elapsed % 60 < 10 ? "0" : "")\(elapsed % 60)] \(line)\n")
}

let runClock = Stopwatch()

/// Writes `text` to standard error.
func printError(_ text: String) {
    let bytes = Array(text.utf8)
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}
