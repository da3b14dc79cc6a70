import Glibc
import JSON

/// Where blebench finds what it runs, checked before anything starts.
struct Installation {
    /// The release build directory (bleagent, blesim, libBench.so).
    let release: String
    /// The repository (the peers' scripts under scripts/blebench).
    let repository: String
    /// The bench venv's Python (Bleak, bless, matplotlib).
    let python: String

    var agent: String { release + "/bleagent" }
    var blesim: String { release + "/blesim" }
    func script(_ name: String) -> String { repository + "/scripts/blebench/" + name }

    /// Fails with what to run when a piece is missing.
    func check() throws {
        let setup = "scripts/blebench-setup.sh (the release build and the bench venv)"
        for path in [agent, blesim, release + "/libBench.so", python, script("bleak_peer.py")]
        where access(path, R_OK) != 0 {
            throw BenchFailure("missing \(path): run \(setup) first, or see --release and --python")
        }
        guard onPath("dbus-daemon") else {
            throw BenchFailure(
                "dbus-daemon is not on PATH (Debian's dbus-daemon; scripts/blebench-setup.sh installs it)")
        }
    }

    private func onPath(_ tool: String) -> Bool {
        let path = getenv("PATH").map { String(cString: $0) } ?? "/usr/bin:/bin"
        return path.split(separator: ":").contains { access("\($0)/\(tool)", X_OK) == 0 }
    }
}

/// One private dbus-daemon and one blesim serving a scenario on it: the world
/// of one section. ``stop()`` ends both.
struct Rig {
    let address: String
    let directory: String
    let bus: pid_t
    let blesim: pid_t

    /// The bus's and blesim's processes.
    var pids: [pid_t] { [bus, blesim] }

    /// Starts the bus, then blesim with `scenario` (JSON text), each awaited on its ready line.
    static func start(_ scenario: String, name: String, in run: RunDirectory, installation: Installation) throws -> Rig
    {
        let directory = try run.subdirectory(name)
        let config = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig><type>session</type><listen>unix:dir=\(directory)</listen><auth>EXTERNAL</auth>
              <policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/>
              <allow own="*"/></policy></busconfig>
            """
        try writeText(config, to: directory + "/bus.conf")
        let addressPipe = try makePipe()
        let bus = try Children.spawn(
            ["dbus-daemon", "--config-file=\(directory)/bus.conf", "--nofork", "--print-address=1"],
            streams: .init(output: addressPipe.write))
        close(addressPipe.write)
        let reader = LineReader(fd: addressPipe.read)
        defer { close(addressPipe.read) }
        guard let address = reader.next(timeout: 20), !address.isEmpty else {
            Children.stop(bus)
            throw BenchFailure("dbus-daemon printed no address within 20 s")
        }
        try writeText(scenario, to: directory + "/scenario.json")
        let log = open(directory + "/blesim.log", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        defer { close(log) }
        let blesim = try Children.spawn(
            [installation.blesim, "--address", address, "--scenario", directory + "/scenario.json"],
            streams: .init(output: log, error: log))
        let rig = Rig(address: address, directory: directory, bus: bus, blesim: blesim)
        let clock = Stopwatch()
        while clock.seconds < 30 {
            if readText(directory + "/blesim.log")?.contains("blesim: ready") == true { return rig }
            if Children.exited(blesim) { break }
            pause(0.02)
        }
        rig.stop()
        let output = readText(directory + "/blesim.log") ?? ""
        throw BenchFailure("blesim did not become ready:\n\(output.suffix(2000))")
    }

    /// The advertisement reports adapter `index` has put on the bus: blesim prints its counters on SIGUSR1
    /// (docs/blesim.md).
    func advertisementReports(adapter index: Int = 0) throws -> Double {
        let log = directory + "/blesim.log"
        let seen = readText(log)?.utf8.count ?? 0
        kill(blesim, SIGUSR1)
        let clock = Stopwatch()
        while clock.seconds < 30 {
            let text = String(decoding: Array((readText(log) ?? "").utf8).dropFirst(seen), as: UTF8.self)
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("blesim: advertisement reports ") }),
                let field = line.split(separator: " ").first(where: { $0.hasPrefix("hci\(index)=") }),
                let count = Double(field.dropFirst("hci\(index)=".count))
            {
                return count
            }
            pause(0.005)
        }
        throw BenchFailure("blesim printed no counters within 30 s of SIGUSR1")
    }

    /// Ends blesim and the bus.
    func stop() {
        Children.stop(blesim)
        Children.stop(bus)
    }
}

/// Runs a short command to its end; its standard output (failure with its output when it fails).
func run(_ arguments: [String], timeout: Double = 30) throws -> String {
    let output = try makePipe()
    let pid = try Children.spawn(arguments, streams: .init(output: output.write, error: output.write))
    close(output.write)
    defer { close(output.read) }
    let reader = LineReader(fd: output.read)
    var lines: [String] = []
    let clock = Stopwatch()
    while let line = reader.next(timeout: max(0.1, timeout - clock.seconds)) { lines.append(line) }
    let finished = Stopwatch()
    while !Children.exited(pid) {
        guard finished.seconds < 5 else {
            Children.stop(pid)
            throw BenchFailure("\(arguments[0]) did not finish within \(timeout) s")
        }
        pause(0.005)
    }
    return lines.joined(separator: "\n")
}

extension StringProtocol {
    func trimmingCharacters(in set: String) -> String {
        let characters = Set(set)
        let trimmed = drop { characters.contains($0) }
        return String(trimmed.reversed().drop { characters.contains($0) }.reversed())
    }
}

/// blebench's temporary directory (sockets, configs, logs), removed at the end.
final class RunDirectory: Sendable {
    let path: String

    init() throws {
        var template = Array("/tmp/blebench-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw BenchFailure("mkdtemp: \(String(cString: strerror(errno)))") }
        path = String(cString: made)
    }

    func subdirectory(_ name: String) throws -> String {
        let directory = path + "/" + name
        guard mkdir(directory, 0o700) == 0 || errno == EEXIST else {
            throw BenchFailure("mkdir \(directory): \(String(cString: strerror(errno)))")
        }
        return directory
    }

    /// Removes the directory and everything in it.
    func remove() {
        _ = try? run(["rm", "-rf", path])
    }
}
