import AgentCore
import GATT
import Glibc
import JSON
import RoleKit
import Testing

/// Loads OneCopyProbe exactly as the agent does (PluginLoader: dlopen of the
/// built .so by path) and checks that the plugin and this process share one
/// copy of the core. With two copies each check fails: the casts return nil,
/// the identities differ and the catches miss.
@Suite("one copy of the core in the process")
struct OneCopyTests {
    let path = "\(buildDirectory)/libOneCopyProbe.so"

    func probeSymbol(_ name: String) throws -> UnsafeMutableRawPointer {
        _ = try PluginLoader().load(name: "OneCopyProbe", role: .central, from: buildDirectory)
        // Already loaded by the loader: RTLD_NOLOAD only returns its handle.
        let handle = try #require(dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD))
        return try #require(dlsym(handle, name))
    }

    func boxed(_ symbol: String) throws -> AnyObject {
        typealias Function = @convention(c) () -> UnsafeMutableRawPointer
        let function = unsafeBitCast(try probeSymbol(symbol), to: Function.self)
        return Unmanaged<AnyObject>.fromOpaque(function()).takeRetainedValue()
    }

    @Test("core values made in the plugin cast (as?) to this process's types")
    func casts() throws {
        let values = try #require(try boxed("onecopy_probe_values") as? [Any])
        #expect(values.count == 3)
        #expect(values[0] as? BluetoothUUID == .heartRate)
        #expect(values[1] as? PluginRole == .peripheral)
        #expect(values[2] as? JSON == [1, "two"])
    }

    @Test("the plugin sees the same type metadata storage (class, struct and enum) as the agent")
    func sameStorage() throws {
        let identities = try #require(try boxed("onecopy_probe_type_identities") as? [ObjectIdentifier])
        #expect(
            identities == [
                ObjectIdentifier(PluginDescriptor.self), ObjectIdentifier(BluetoothUUID.self),
                ObjectIdentifier(JSON.self),
            ])
    }

    @Test("errors of core types thrown in the plugin are caught by type in the agent")
    func errorsByType() async throws {
        let descriptor = try PluginLoader().load(name: "OneCopyProbe", role: .peripheral, from: buildDirectory)
        let host = RecordingPluginHost(namespace: descriptor.namespace)
        let plugin = try descriptor.factory(host.context(role: .peripheral, directory: "/nonexistent"))
        try await plugin.start()
        #expect(host.events == ["started"])
        let call = PluginCall(method: "probe.fail", params: nil, callerUid: 0, callerPid: 0)
        let fail = try #require(host.handler("probe.fail"))
        let parse = try #require(host.handler("probe.parse"))
        do {
            _ = try await fail(call)
            Issue.record("probe.fail returned")
        } catch let error as PluginMethodError {
            #expect(error == PluginMethodError(code: 4242, "probe failure", data: ["from": "plugin"]))
        }
        do {
            _ = try await parse(call)
            Issue.record("probe.parse returned")
        } catch let error as JSONParseError {
            #expect(!error.description.isEmpty)
        }
        await plugin.stop()
    }
}
