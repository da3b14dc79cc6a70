import Glibc

/// The repository's virtualenv, made by `scripts/bleak-venv.sh` (Bleak and bthome-ble pinned there), shared by
/// the tests that run Python clients.
public enum BleakVenv {
    /// Its interpreter, or `$BLEAK_PYTHON`.
    public static let python: String =
        getenv("BLEAK_PYTHON").map { String(cString: $0) }
        ?? BlesimProcess.repositoryRoot + "/.build/venv-bleak/bin/python"

    /// Whether a test needing it should run: yes when it exists, and in CI (`CI=true`) also when it does not, so
    /// that a missing virtualenv is a failure, never a silent skip; elsewhere the test is skipped with a message
    /// naming `suite`.
    public static func enabled(for suite: String) -> Bool {
        if access(python, X_OK) == 0 { return true }
        let inCI = getenv("CI").map { String(cString: $0) } == "true"
        if !inCI {
            print(
                "\(suite) skipped: no \(python); run `. scripts/bleak-venv.sh && ensure_bleak_venv` (scripts/test.sh does)"
            )
        }
        return inCI
    }
}
