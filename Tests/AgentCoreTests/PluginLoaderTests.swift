import AgentCore
import BLETesting
import Glibc
import RoleKit
import Testing

@Suite("plugin loader")
struct PluginLoaderTests {
    let loader = PluginLoader()

    func loadError(_ name: String, _ role: PluginRole, from directory: String = buildDirectory) -> PluginLoadError? {
        do {
            _ = try loader.load(name: name, role: role, from: directory)
            return nil
        } catch {
            return error
        }
    }

    @Test("a missing file is named, with its full path")
    func fileMissing() {
        let error = loadError("Absent", .central)
        #expect(error == .fileMissing(path: "\(buildDirectory)/libAbsent.so"))
        #expect(error?.description == "no plugin file \(buildDirectory)/libAbsent.so")
    }

    @Test("a file that is not a shared object gives dlopen's reason, not a crash")
    func notAnELF() {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        writeBytes("\(directory.path)/libJunk.so", Array(String(repeating: "not a plugin\n", count: 10).utf8))
        let path = "\(directory.path)/libJunk.so"
        let error = loadError("Junk", .central, from: directory.path)
        #expect(error == .notLoadable(path: path, reason: "\(path): invalid ELF header"))
        #expect(error?.description == "\(path) is not a loadable shared library: \(path): invalid ELF header")
    }

    @Test("a shared library without the entry points is not a plugin")
    func missingSymbol() {
        let path = "\(buildDirectory)/libNoEntryPointPlugin.so"
        let error = loadError("NoEntryPointPlugin", .central)
        #expect(error == .missingSymbol(path: path, symbol: "bleagent_plugin_abi_version"))
        #expect(
            error?.description == "\(path) is not a bleagent plugin: it does not export bleagent_plugin_abi_version")
    }

    @Test("a plugin built for another ABI is refused on its version alone; its descriptor is never read")
    func wrongABI() {
        // The fixture's descriptor entry point returns an address that faults if read.
        let path = "\(buildDirectory)/libWrongABIPlugin.so"
        let error = loadError("WrongABIPlugin", .central)
        #expect(error == .abiMismatch(path: path, plugin: PluginABI.version + 1, agent: PluginABI.version))
        #expect(
            error?.description
                == "\(path) was built for plugin ABI version \(PluginABI.version + 1), this agent has version "
                + "\(PluginABI.version): rebuild the plugin against this agent's core")
    }

    @Test("a plugin for the other role is refused; the same plugin loads for its own role")
    func otherRole() throws {
        let path = "\(buildDirectory)/libPeripheralOnlyPlugin.so"
        let error = loadError("PeripheralOnlyPlugin", .central)
        #expect(error == .wrongRole(path: path, serves: [.peripheral], wanted: .central))
        #expect(error?.description == "\(path) serves the peripheral role only, not central")
        let descriptor = try loader.load(name: "PeripheralOnlyPlugin", role: .peripheral, from: buildDirectory)
        #expect(descriptor.name == "PeripheralOnlyPlugin")
        #expect(descriptor.roles == [.peripheral])
    }

    @Test("a plugin file renamed to another plugin's name is refused (name mismatch)")
    func nameMismatch() {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = "\(directory.path)/libRenamed.so"
        copyFile("\(buildDirectory)/libDiagnostics.so", path)
        let error = loadError("Renamed", .central, from: directory.path)
        #expect(error == .nameMismatch(path: path, declared: "Diagnostics", configured: "Renamed"))
        #expect(error?.description == "\(path) is the plugin \"Diagnostics\", not \"Renamed\"")
    }

    @Test("a name that is a path is refused before anything is opened")
    func pathAsName() {
        #expect(loadError("../Diagnostics", .central) == .badName("../Diagnostics"))
        #expect(loadError("/tmp/libX", .central) == .badName("/tmp/libX"))
        #expect(loadError("", .central) == .badName(""))
    }

    @Test("a plugin loaded once is reused (the role switched back gets the same descriptor)")
    func reuse() throws {
        let first = try loader.load(name: "Diagnostics", role: .central, from: buildDirectory)
        let second = try loader.load(name: "Diagnostics", role: .peripheral, from: buildDirectory)
        let third = try loader.load(name: "Diagnostics", role: .central, from: buildDirectory + "/")
        #expect(first === second)
        #expect(first === third)
        #expect(first.namespace == "diag")
        #expect(first.abiVersion == PluginABI.version)
    }
}
