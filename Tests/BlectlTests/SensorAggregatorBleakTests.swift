import BLETesting
import Glibc
import JSON
import Testing

/// The virtualenv's interpreter (the kit's `BleakVenv`).
private let python = BleakVenv.python

/// In CI a missing virtualenv is a failure, never a silent skip; elsewhere the test is skipped with a message.
private let bleakAvailable = BleakVenv.enabled(for: "SensorAggregatorBleakTests")

/// Bleak (PyPI, unmodified) as a real central against bleagent running SensorAggregator in the peripheral role on
/// its embedded blesim: the agent on hci0, Tests/Bleak/sensor_aggregator.py on hci1 of the same private bus. The
/// script drives the temperature through the agent's ingest socket, decodes the BTHome service data with
/// `bthome-ble` (Home Assistant's parser), connects, reads and gets notifications, and checks with a second central
/// on hci2 that only subscribed centrals get them (the scenario's controllers keep advertising with a central
/// connected, as controllers whose LE states allow it do, so hci2 can find the node); it prints one "ok:" line per step
/// and exits non-zero on the first failed check.
@Suite("SensorAggregator with Bleak as the central", .serialized, .timeLimit(.minutes(3)))
struct SensorAggregatorBleakTests {
    static let sensors = """
        { "id": "room", "kind": "temperature", "notifyDelta": 0.5, "source": { "type": "ingest" } },
        { "id": "hum", "kind": "humidity", "source": { "type": "simulated", "waveform": "constant", "base": 46.65 } },
        { "id": "baro", "kind": "pressure", "source": { "type": "simulated", "waveform": "constant", "base": 101317 } },
        { "id": "bat", "kind": "battery", "source": { "type": "simulated", "waveform": "constant", "base": 87 } }
        """

    @Test(
        "Bleak's scan sees the BTHome service data (bthome-ble decodes 23.14 degC, 46.65 %, 1013.17 hPa, 87 %), connects, reads Temperature, ES Measurement and Summary, gets notifications through StartNotify and then through AcquireNotify as ingest readings change while a second connected central (hci2) gets none until it subscribes, disconnects",
        .enabled(if: bleakAvailable))
    func bleakCentral() async throws {
        guard access(python, X_OK) == 0 else {
            Issue.record("CI=true and no Bleak virtualenv at \(python): run scripts/bleak-venv.sh's ensure_bleak_venv")
            return
        }
        let data = makeTemporaryDirectory()
        defer { removeTree(data) }
        let ingest = "\(data)/ingest.sock"
        let agent = try await RunningAgent(
            config: SensorAgent.config(
                scenario: SensorAgent.scenario(adapters: 3, in: data, advertiseWhileConnected: true), ingest: ingest,
                sensors: Self.sensors))
        let status = try await SensorAgent.call(agent, "agent.status")
        let address = try #require(status["sim"]?["busAddress"]?.stringValue, "\(status)")

        let script = try await Child(
            python, ["\(repositoryRoot)/Tests/Bleak/sensor_aggregator.py", ingest, "--acquire-notify"],
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": address, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1"])
        // The script's own waits are 30 s each; it prints a line after each step.
        let (exitStatus, output, errors) = await script.finish(silence: .seconds(90))
        #expect(
            exitStatus == 0, "sensor_aggregator.py failed:\n\(output)\n\(errors)\nagent log:\n\(agent.child.stderrText)"
        )
        for step in [
            "decoded by bthome-ble 3.25.0: {'battery': 87, 'temperature': 23.14, 'humidity': 46.65, 'pressure': 1013.17}",
            "read Temperature 0a09 = 23.14 degC", "StartNotify: ", "AcquireNotify: ", "'c409', '5a0a', '6009']",
            "hci2 (connected) got nothing until it subscribed, then ", "disconnected",
        ] {
            #expect(output.contains(step), "no '\(step)' in:\n\(output)")
        }
        print(output)
        // The agent counted the script's ingest lines as accepted, none refused.
        let stats = try await SensorAgent.call(agent, "sensors.ingest-stats")
        #expect(stats["rejectedTotal"]?.intValue == 0, "\(stats)")
        #expect((stats["accepted"]?.intValue ?? 0) >= 5, "\(stats)")
        #expect(await agent.stop().status == 0)
    }
}
