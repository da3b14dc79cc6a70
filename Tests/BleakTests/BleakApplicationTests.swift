import BLETesting
import Glibc
import Testing

/// Bleak on hci1 against a GATT application registered on hci0 (Tests/BlesimTests/Fixtures/bridge-app.py, run with
/// the system Python), through blesim: Tests/Bleak/app-central.py checks what Bleak sees; the application's
/// transcript (appended by the shell wrapper after "--- app:") shows what reached the application.
@Test(
    "Bleak on hci1 scans for an application on hci0 with a service filter, reads, writes with and without response, and gets notifications through AcquireNotify and StartNotify",
    .enabled(if: bleakAvailable && access("/usr/bin/python3", X_OK) == 0), .timeLimit(.minutes(2)))
func bleakAgainstLocalApplication() async throws {
    guard access(python, X_OK) == 0 else {
        Issue.record("CI=true and no Bleak virtualenv at \(python): run scripts/bleak-venv.sh's ensure_bleak_venv")
        return
    }
    let root = BlesimProcess.repositoryRoot
    try await PrivateBus.with { bus in
        let sim = try await BlesimProcess.start(address: bus.address, scenario: root + "/Tests/Bleak/two-adapters.json")
        defer { sim.stop() }
        // The application runs beside Bleak; the trap stops it on every path and prints its transcript.
        let script = """
            log=$(mktemp)
            /usr/bin/python3 -u "$1" hci0 >"$log" 2>&1 &
            app=$!
            trap 'kill $app 2>/dev/null; wait $app 2>/dev/null; echo "--- app:"; cat "$log"; rm -f "$log"' EXIT
            for _ in $(seq 600); do
                grep -qx ready "$log" && break
                kill -0 $app 2>/dev/null || exit 3
                sleep 0.1
            done
            grep -qx ready "$log" || exit 4
            "$2" "$3"
            """
        let (output, status) = try await tool([
            "env", "DBUS_SYSTEM_BUS_ADDRESS=\(bus.address)", "PYTHONDONTWRITEBYTECODE=1", "bash", "-c", script, "bash",
            root + "/Tests/BlesimTests/Fixtures/bridge-app.py", python, root + "/Tests/Bleak/app-central.py",
        ])
        #expect(status == 0, "app-central.py failed:\n\(output)")
        let marker = output.firstRange(of: "--- app:")
        let bleak = marker.map { String(output[..<$0.lowerBound]) } ?? output
        let app = marker.map { String(output[$0.upperBound...]) } ?? ""
        for step in [
            "ok: scan found", "write without response read back", "ok: AcquireNotify: pulse", "ok: StartNotify: pulse",
            "ok: AcquireNotify to the application's own", "ok: indications", "ok: disconnected",
        ] {
            #expect(bleak.contains(step), "no '\(step)' in:\n\(output)")
        }
        // Bleak's AcquireNotify and its StartNotify both reached the application as StartNotify.
        // (each followed by its StopNotify: Bleak closing the AcquireNotify socket is a CCC write of 0).
        let pulse = app.split(separator: "\n").filter { $0.hasSuffix("Notify pulse") }
        #expect(
            pulse == ["StartNotify pulse", "StopNotify pulse", "StartNotify pulse", "StopNotify pulse"], "\(output)")
        for line in ["WriteValue data 2a", "AcquireNotify stream device=", "Confirm alert", "sink got 55"] {
            #expect(app.contains(line), "no '\(line)' in the application's transcript:\n\(output)")
        }
    }
}
