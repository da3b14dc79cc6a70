import FuzzTargets
import Glibc

/// blefuzz's command line apart from libFuzzer: the usage text, replaying
/// saved inputs, writing seeds.
enum Usage {
    static let text = """
        usage: blefuzz TARGET [libFuzzer options] [CORPUS_DIR...]   (a --sanitize=fuzzer build: fuzz TARGET)
               blefuzz TARGET FILE|DIR...                           (a normal build: run saved inputs)
               blefuzz --list                                       (name the targets)
               blefuzz --seeds TARGET DIR                           (write TARGET's seeds into DIR)
        scripts/fuzz.sh builds the fuzzing binary and runs every target for a bounded time.
        """

    /// The usage text and the target names, on standard error.
    static func printUsage() {
        printError(text + "\ntargets: " + FuzzTargets.all.map(\.name).joined(separator: ", ") + "\n")
    }

    /// Runs the command line of a build without libFuzzer; exits.
    static func run(_ arguments: [String]) -> Never {
        switch arguments.first {
        case "--list":
            for target in FuzzTargets.all { write(to: 1, "\(target.name)\t\(target.summary)\n") }
            exit(0)
        case "--seeds" where arguments.count == 3:
            guard let target = FuzzTargets.named(arguments[1]) else { fail("unknown target \(arguments[1])") }
            writeSeeds(of: target, into: arguments[2])
            exit(0)
        case let name? where arguments.count >= 2:
            guard let target = FuzzTargets.named(name) else { fail("unknown target \(name)") }
            exit(replay(target, arguments.dropFirst().flatMap(files(at:))))
        default:
            printUsage()
            exit(64)
        }
    }

    /// Runs each file through `target`, printing one line per file; 1 if any
    /// broke an invariant. The name is printed before the run, so a crash
    /// shows which input caused it.
    static func replay(_ target: FuzzTarget, _ paths: [String]) -> Int32 {
        var findings = 0
        for path in paths {
            write(to: 1, "\(path): ")
            do {
                try target.run(readFile(path))
                write(to: 1, "ok\n")
            } catch {
                findings += 1
                write(to: 1, "FINDING: \(error)\n")
            }
        }
        write(to: 1, "\(target.name): \(paths.count) inputs, \(findings) findings\n")
        return findings == 0 ? 0 : 1
    }

    /// `path` itself, or the files in it when it is a directory.
    static func files(at path: String) -> [String] {
        FuzzFiles.entries(in: path).isEmpty ? [path] : FuzzFiles.files(in: path)
    }

    /// Writes the target's seeds as `seed-NN` and its fixture files under
    /// their own names (relative to the current directory: the repository).
    static func writeSeeds(of target: FuzzTarget, into directory: String) {
        mkdir(directory, 0o755)
        for (index, seed) in target.seeds().enumerated() {
            writeFile(directory + "/seed-" + (index < 9 ? "0" : "") + String(index + 1), seed)
        }
        for file in target.seedFiles {
            let name = file.replacing("/", with: "-")
            writeFile(directory + "/fixture-" + name, readFile(file))
        }
    }

    static func readFile(_ path: String) -> [UInt8] {
        switch FuzzFiles.read(path) {
        case .success(let bytes): bytes
        case .failure(let error): fail("cannot read \(error)")
        }
    }

    static func writeFile(_ path: String, _ bytes: [UInt8]) {
        if case .failure(let error) = FuzzFiles.write(bytes, to: path) { fail("cannot write \(error)") }
    }

    static func fail(_ message: String) -> Never {
        printError("blefuzz: \(message)\n")
        exit(1)
    }

    /// Writes `text` to `fd` unbuffered, so a crash right after it does not lose it.
    static func write(to fd: Int32, _ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let count = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return }
            bytes = bytes.dropFirst(count)
        }
    }

    static func printError(_ text: String) { write(to: 2, text) }
}
