import FuzzTargets
import Glibc

// `blefuzz TARGET [libFuzzer options] [CORPUS...]`: the first argument picks
// the target, the rest go to libFuzzer (docs/testing.md). Built with
// `--sanitize=fuzzer` and BLEFUZZ_LIBFUZZER defined (scripts/fuzz.sh), this
// file supplies libFuzzer's two entry points; otherwise `Replay` is the
// program and runs saved inputs through a target without libFuzzer.

/// The target this process fuzzes: chosen by `LLVMFuzzerInitialize` (which
/// stores its name in BLEFUZZ_TARGET, so that the processes libFuzzer starts
/// for `-fork`, `-jobs` or `-minimize_crash` fuzz the same one).
let selectedTarget: FuzzTarget? = getenv(targetVariable).flatMap { FuzzTargets.named(String(cString: $0)) }
let targetVariable = "BLEFUZZ_TARGET"

#if BLEFUZZ_LIBFUZZER
    /// libFuzzer's set-up hook: takes the target name off the arguments.
    @_cdecl("LLVMFuzzerInitialize")
    public func fuzzerInitialize(
        _ argc: UnsafeMutablePointer<CInt>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>
    ) -> CInt {
        if argc.pointee > 1, let first = argv.pointee[1], FuzzTargets.named(String(cString: first)) != nil {
            setenv(targetVariable, first, 1)
            argv.pointee[1] = argv.pointee[0]
            argv.pointee += 1
            argc.pointee -= 1
        }
        guard selectedTarget != nil else {
            Usage.printUsage()
            exit(64)
        }
        return 0
    }

    /// libFuzzer's per-input hook. A finding aborts, so libFuzzer saves the input.
    @_cdecl("LLVMFuzzerTestOneInput")
    public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
        guard let target = selectedTarget else { return 0 }
        do {
            try target.run(Array(UnsafeBufferPointer(start: data, count: size)))
        } catch {
            Usage.printError("blefuzz: \(target.name): \(error)\n")
            abort()
        }
        return 0
    }
#else
    /// Without libFuzzer: `blefuzz TARGET FILE|DIR...` runs saved inputs
    /// (a crash's reproducer, a corpus) through a target; `blefuzz --list`
    /// names the targets; `blefuzz --seeds TARGET DIR` writes the target's
    /// seeds into DIR.
    @main
    enum Replay {
        static func main() {
            Usage.run(Array(CommandLine.arguments.dropFirst()))
        }
    }
#endif
