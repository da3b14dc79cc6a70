import AgentCore
import BLETesting
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

/// scripts/check-one-copy.sh on a directory of images made for the purpose:
/// it passes with the real core library and a real plugin, and fails, naming
/// the image, when a plugin carries its own static copy of a core module or
/// when a second copy of libBLECore.so sits under another name.
@Suite("the one-copy check catches a second copy", .serialized)
struct OneCopyCheckTests {
    static let repositoryRoot: String = {
        let file = "\(#filePath)"
        return String(file.dropLast("/Tests/AgentCoreTests/OneCopyTests.swift".count))
    }()

    /// Runs `command` under bash; its exit status, standard output and standard error.
    func shell(_ command: String, in directory: String) async throws -> (status: Int32, stdout: String, stderr: String)
    {
        let run = try await TestProcess("bash", ["-c", "cd '\(directory)' && { \(command) ; }"])
        let result = await run.finish()
        return (result.status, result.output, result.errors)
    }

    func readText(_ path: String) -> String {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return "" }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while case let count = read(fd, &chunk, chunk.count), count > 0 { bytes += chunk[..<count] }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test(
        "a plugin linked with a static copy of the JSON module, and libBLECore.so copied under another name, each fail the check"
    )
    func secondCopiesFail() async throws {
        let directory = try temporaryDirectory("onecopy")
        defer { removeTree(directory) }
        let check = "bash '\(Self.repositoryRoot)/scripts/check-one-copy.sh' '\(directory)'"

        // The real core library and a real plugin built against the product: clean.
        copyFile("\(buildDirectory)/libBLECore.so", "\(directory)/libBLECore.so")
        copyFile("\(buildDirectory)/libOneCopyProbe.so", "\(directory)/libOneCopyProbe.so")
        _ = try await shell("chmod +x *.so", in: directory)
        let clean = try await shell(check, in: directory)
        #expect(clean.status == 0, "\(clean)")
        #expect(clean.stdout.contains("; 1 other images define none"), "\(clean)")

        // A plugin that links the JSON module's objects into itself, as a
        // dependency on the JSON target instead of the BLECore product does.
        let linked = try await shell(
            "cc -shared -o libStaticCopyPlugin.so '\(buildDirectory)'/OneCopyProbe.build/*.o '\(buildDirectory)'/JSON.build/*.o",
            in: directory)
        try #require(linked.status == 0, "linking the bad plugin: \(linked)")
        let staticCopy = try await shell(check, in: directory)
        #expect(staticCopy.status == 1, "\(staticCopy)")
        #expect(staticCopy.stderr.contains("\(directory)/libStaticCopyPlugin.so defines "), "\(staticCopy)")
        #expect(staticCopy.stderr.contains("core symbols (a second copy of the core)"), "\(staticCopy)")
        #expect(staticCopy.stdout.hasSuffix("(FAILED)\n"), "\(staticCopy)")
        #expect(!staticCopy.stderr.contains("libOneCopyProbe.so"), "the good plugin is not blamed: \(staticCopy)")

        // The whole core library again, under another path's name.
        _ = try await shell("rm libStaticCopyPlugin.so && cp libBLECore.so libBLECoreCopy.so", in: directory)
        let wholeCopy = try await shell(check, in: directory)
        #expect(wholeCopy.status == 1, "\(wholeCopy)")
        #expect(wholeCopy.stderr.contains("\(directory)/libBLECoreCopy.so defines "), "\(wholeCopy)")
    }
}
