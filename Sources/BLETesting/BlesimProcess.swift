import Glibc
import IO

/// The built blesim binary (beside the test binary, or `$BLESIM`) serving on a
/// private bus; ready once it printed its `blesim: ready` line (read on the
/// shared loop: an event, not a delay). Killed when dropped.
public final class BlesimProcess: Sendable {
    /// The repository this file is in.
    public static let repositoryRoot: String = {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)
        return parts.joined(separator: "/")
    }()
    /// The small scenario of Tests/BlesimTests/Fixtures.
    public static let airScenario = repositoryRoot + "/Tests/BlesimTests/Fixtures/air.json"
    /// The blesim binary: `$BLESIM`, else the one in ``buildDirectory``.
    public static var executable: String {
        getenv("BLESIM").map { String(cString: $0) } ?? buildDirectory + "/blesim"
    }

    /// blesim's process id.
    public var pid: Int32 { process.pid }
    private let process: ChildProcess

    private init(process: ChildProcess) {
        self.process = process
    }

    deinit { process.signal(SIGKILL) }

    /// Starts blesim on `address` with `scenario` (and `options`, such as
    /// `--extended-advertising`; a nil `scenario` leaves it to them) and waits for it to be ready.
    public static func start(
        address: String, scenario: String? = airScenario, options: [String] = []
    ) async throws -> BlesimProcess {
        guard access(executable, X_OK) == 0 else {
            throw PrivateBus.Failure.setup("no blesim at \(executable): run `swift build` first")
        }
        let process = try await ChildProcess.spawn(
            executable, ["--address", address] + (scenario.map { ["--scenario", $0] } ?? []) + options,
            standardOutput: .collect(limit: 1 << 20), standardError: .null, deathSignal: SIGTERM)
        let ready = await process.standardOutput?.wait(timeout: .seconds(60)) { bytes in
            String(decoding: bytes, as: UTF8.self).contains("blesim: ready")
        }
        guard ready == true else {
            process.signal(SIGKILL)
            throw PrivateBus.Failure.setup("blesim did not become ready")
        }
        return BlesimProcess(process: process)
    }

    /// Kills blesim (SIGKILL, as a crash) and waits until it is gone.
    public func kill() async {
        process.signal(SIGKILL)
        _ = await process.wait()
    }

    /// Kills blesim (SIGKILL) without waiting (the shared loop reaps it), for clean-up in `defer`.
    public func stop() { process.signal(SIGKILL) }

    /// Standard output so far (blesim's log of what happened in the air).
    public var outputText: String { process.standardOutput?.text ?? "" }
}

/// The directory holding the built binaries (blesim, bleagent, blectl, the plugins): the test binary's own.
public let buildDirectory: String = {
    var buffer = [CChar](repeating: 0, count: 4096)
    let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    let path = String(decoding: buffer[..<max(0, count)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)])
}()
