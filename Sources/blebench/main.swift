import Glibc
import JSON
import Synchronization

// blebench: the agent beside Bleak and bless, in one run on private buses and blesim (docs/benchmarks.md).
// A program, not a test: it prints figures. It builds nothing; it stops at its time limit, and on any exit path
// (a failure, Ctrl-C, SIGTERM, the limit) it kills every process it started and removes its temporary directory.

// Before any thread exists: the signals that end the run go to the one thread that waits for them.
/// SIGINT, SIGTERM and SIGHUP.
func endSignals() -> sigset_t {
    var set = sigset_t()
    sigemptyset(&set)
    for signal in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&set, signal) }
    return set
}
var blocked = endSignals()
pthread_sigmask(SIG_BLOCK, &blocked, nil)
signal(SIGPIPE, SIG_IGN)

let options: Options
do {
    options = try Options(Array(CommandLine.arguments.dropFirst()))
} catch {
    printError("\(error)\n")
    exit(2)
}

/// The release directory: --release, else this executable's.
let selfPath: String = {
    var buffer = [CChar](repeating: 0, count: 4096)
    let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    return count > 0 ? String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self) : "."
}()
func parent(_ path: String) -> String { path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "." }
let release = options.release ?? parent(selfPath)
// .build/release is a link to .build/<triple>/release: the repository is above the .build that holds it.
var repository = parent(release)
while repository.count > 1, !repository.hasSuffix("/.build") { repository = parent(repository) }
repository = parent(repository)
let installation = Installation(
    release: release, repository: repository, python: options.python ?? repository + "/.build/venv-bench/bin/python")
do {
    try installation.check()
} catch {
    printError("blebench: \(error)\n")
    exit(1)
}
let runDirectory: RunDirectory
do {
    runDirectory = try RunDirectory()
} catch {
    printError("blebench: \(error)\n")
    exit(1)
}

/// Set by the first ``finish(_:)``; a second caller (the main thread failing because a signal's finish killed
/// its children) waits for the first to exit.
let finishing = Atomic<Bool>(false)

/// Kills every child, removes the temporary directory and exits with `status` (the first caller's).
func finish(_ status: Int32) -> Never {
    if finishing.exchange(true, ordering: .acquiringAndReleasing) {
        while true { pause(3600) }
    }
    Children.killAll()
    if options.keep {
        printError("blebench: kept \(runDirectory.path)\n")
    } else {
        runDirectory.remove()
    }
    exit(status)
}

// Ctrl-C, SIGTERM, SIGHUP: clean up and exit 130.
_ = onBackgroundThread {
    var received: Int32 = 0
    var waited = endSignals()
    sigwait(&waited, &received)
    printError("\nblebench: signal \(received): stopping every process it started\n")
    finish(130)
}
// The time limit.
_ = onBackgroundThread {
    pause(options.timeout)
    printError("\nblebench: the run passed its limit of \(Int(options.timeout)) s (--timeout): stopping\n")
    finish(124)
}

let bench = Bench(options: options, installation: installation, run: runDirectory)
var results = Results()
let loadAtStart = loadAverage()
progress("blebench: \(release); load average \(loadAtStart) (other work on the machine makes figures noisy)")
do {
    if options.sections.contains("ingest") {
        for devices in options.ingestDevices {
            for rate in options.ingestRates { results.ingest += try bench.ingest(devices: devices, rate: rate) }
        }
    }
    if options.sections.contains("flows") {
        results.flows += try bench.agentFlows()
        results.flows += try bench.peerFlows()
    }
    if options.sections.contains("control") {
        let (footprint, control) = try bench.startupAndControl()
        results.footprint = footprint
        results.control = control
    }
    if options.sections.contains("crowd") { results.crowd = try bench.crowd() }
} catch {
    if !finishing.load(ordering: .acquiring) { printError("blebench: \(error)\n") }
    finish(1)
}
results.machine = machineJSON(loadAtStart: loadAtStart)

print(results.tables())
let machine = results.machine.objectValue
print(
    "\nmachine: \(machine?["cpu"]?.stringValue ?? "?"), \(machine?["cores"]?.intValue ?? 0) cores, "
        + "\(machine?["memoryGiB"]?.doubleValue ?? 0) GiB, Linux \(machine?["kernel"]?.stringValue ?? "?"); "
        + "load average \(loadAtStart) at start, \(loadAverage()) at end")
let jsonPath = options.json ?? repository + "/.build/blebench/results.json"
let plotPath = options.plot ?? repository + "/.build/blebench/ingest.png"
do {
    _ = try? run(["mkdir", "-p", parent(jsonPath)])
    try writeText(results.json.serialized(.pretty) + "\n", to: jsonPath)
    print("results: \(jsonPath)")
    if !plotPath.isEmpty, !results.ingest.isEmpty {
        _ = try? run(["mkdir", "-p", parent(plotPath)])
        _ = try run([installation.python, installation.script("plot.py"), jsonPath, plotPath], timeout: 120)
        print("plot: \(plotPath)")
    }
} catch {
    printError("blebench: \(error)\n")
    finish(1)
}
finish(0)
