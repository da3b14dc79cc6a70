import Foundation

/// Whether a test that needs a tool we did not write (bluetoothctl, BlueZ's example
/// scripts) runs: always in CI (`CI=true`), where scripts/lib.sh installs the tool and
/// its absence must fail the run, not skip it; elsewhere only when the tool is there.
func requiredOrPresent(_ path: String) -> Bool {
    ProcessInfo.processInfo.environment["CI"] == "true" || FileManager.default.fileExists(atPath: path)
}
