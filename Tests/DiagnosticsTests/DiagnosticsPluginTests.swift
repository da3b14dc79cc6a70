import BLETesting
import JSON
import Testing

@testable import Diagnostics

/// The Diagnostics plugin in a harness of the test kit: a recording host for its methods, events and log, and a
/// peripheral manager over the fake backend. This is the example of docs/plugins.md, "Testing a plugin".
@Suite("The Diagnostics plugin over BLETesting")
struct DiagnosticsPluginTests {
    @Test("diag.ping counts the starts kept in the state directory; diag.ble reports the peripheral manager")
    func pingAndBLE() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (manager, _) = await FakePeripheralBackend.poweredOn()
        for start in Int64(1)...2 {
            let host = RecordingPluginHost(namespace: "diag")
            let context = host.context(role: .peripheral, directory: directory.path, manager: .peripheral(manager))
            let plugin = try DiagnosticsPlugin(context: context)
            try await plugin.start()
            #expect(try await host.call("diag.ping")["starts"] == .int(start))
            #expect(
                try await host.call("diag.ble")
                    == ["manager": "peripheral", "state": "poweredOn", "otherRoleRefused": true])
            await plugin.stop()
            #expect(
                host.logLines == [
                    "info: started in the peripheral role (start \(start) on this node)", "info: stopped",
                ])
        }
    }
}
