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

    @Test("a file that is not a shared object is refused before dlopen, not a crash")
    func notAnELF() {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        writeBytes("\(directory.path)/libJunk.so", Array(String(repeating: "not a plugin\n", count: 10).utf8))
        let path = "\(directory.path)/libJunk.so"
        let error = loadError("Junk", .central, from: directory.path)
        #expect(
            error
                == .malformed(path: path, reason: "it is not an ELF file (it does not start with the ELF magic number)")
        )
    }

    @Test(
        "a plugin cut short anywhere (a half-copied upgrade) is refused before dlopen maps it",
        arguments: [
            3, 64, 100, 1_000, 20_000, 60_000, 140_000,
        ])
    func truncated(length: Int) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let whole = try #require(readBytes("\(buildDirectory)/libDiagnostics.so"))
        try #require(whole.count > length)
        writeBytes("\(directory.path)/libCut.so", Array(whole.prefix(length)))
        guard case .malformed(_, let reason)? = loadError("Cut", .central, from: directory.path) else {
            Issue.record("not refused as malformed")
            return
        }
        #expect(reason.hasPrefix("truncated") || reason.hasPrefix("it is not an ELF file"), "\(reason)")
    }

    @Test("a plugin directory or file others can change is refused, naming the path")
    func untrusted() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let plugins = "\(directory.path)/plugins"
        mkdir(plugins, 0o755)
        let file = "\(plugins)/libDiagnostics.so"
        copyFile("\(buildDirectory)/libDiagnostics.so", file)
        chmod(file, 0o755)
        func reason() -> String? {
            if case .untrusted(_, let reason)? = loadError("Diagnostics", .central, from: plugins) { return reason }
            return nil
        }
        chmod(plugins, 0o1777)
        #expect(reason()?.hasPrefix("\(plugins) is writable by others (mode 01777)") == true, "no sticky exception")
        chmod(plugins, 0o775)
        #expect(reason()?.hasPrefix("\(plugins) is writable by its group (mode 0775)") == true)
        chmod(plugins, 0o755)
        chmod(file, 0o646)
        #expect(reason()?.hasPrefix("\(file) is writable by others (mode 0646)") == true)
        chmod(file, 0o755)
        chown(file, 65534, 65534)
        #expect(reason()?.hasPrefix("\(file) is owned by uid 65534") == true)
        chown(file, geteuid(), getegid())
        chmod(directory.path, 0o777)
        #expect(reason()?.hasPrefix("\(directory.path) is writable by others (mode 0777)") == true)
        chmod(directory.path, 0o1777)
        #expect(reason() == nil, "a sticky parent, as /tmp")
        chmod(directory.path, 0o700)
        symlink(plugins, "\(directory.path)/link")
        chmod(plugins, 0o777)
        if case .untrusted(_, let why)? = loadError("Diagnostics", .central, from: "\(directory.path)/link") {
            #expect(why.hasPrefix("\(plugins) is writable by others"), "checked where the link leads: \(why)")
        } else {
            Issue.record("a link to a world-writable directory was trusted")
        }
        chmod(plugins, 0o755)
        #expect(
            try loader.load(name: "Diagnostics", role: .central, from: "\(directory.path)/link").name == "Diagnostics")
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
