import BLETesting
import Glibc
import Testing

/// The virtualenv's interpreter (the kit's `BleakVenv`).
let python = BleakVenv.python

/// In CI a missing virtualenv is a failure, never a silent skip; elsewhere the test is skipped with a message.
let bleakAvailable = BleakVenv.enabled(for: "BleakTests")

/// Bleak from PyPI, unmodified, against blesim on a private bus: Tests/Bleak/central.py with the scenario
/// Tests/Bleak/heart-rate.json. The script checks each step and exits non-zero on the first failure; its output
/// (one "ok:" line per step) is attached to the failure.
@Test(
    "Bleak scans with a service filter, connects, reads, writes with and without response, gets notifications through AcquireNotify and StartNotify, and disconnects",
    .enabled(if: bleakAvailable), .timeLimit(.minutes(2)))
func bleakCentralAgainstBlesim() async throws {
    guard access(python, X_OK) == 0 else {
        Issue.record("CI=true and no Bleak virtualenv at \(python): run scripts/bleak-venv.sh's ensure_bleak_venv")
        return
    }
    try await TestBed.with(blesim: .file(BlesimProcess.repositoryRoot + "/Tests/Bleak/heart-rate.json")) { bed in
        let (output, status) = try await tool([
            "env", "DBUS_SYSTEM_BUS_ADDRESS=\(bed.bus.address)", "PYTHONDONTWRITEBYTECODE=1", python,
            BlesimProcess.repositoryRoot + "/Tests/Bleak/central.py",
        ])
        #expect(status == 0, "central.py failed:\n\(output)")
        for step in [
            "scan found", "read Battery Level", "write with response", "AcquireNotify:", "StartNotify:", "disconnected",
        ] {
            #expect(output.contains(step), "no '\(step)' in:\n\(output)")
        }
    }
}
