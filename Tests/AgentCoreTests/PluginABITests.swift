import AgentCore
import BLETesting
import Glibc
import RoleKit
import Testing

/// `PluginABI.version` is bumped by hand; this makes a forgotten bump show.
/// The plugin-visible surface (RoleKit's exported symbols in libBLECore.so,
/// as scripts/plugin-abi-symbols.sh lists them) is recorded per ABI version
/// under Fixtures/plugin-abi/. A change to that surface (a stored property
/// added to the descriptor or the context, a requirement added to
/// RolePlugin, a changed signature) fails the comparison until the change is
/// recorded, and recording it for a new version means bumping the constant.
@Suite("the plugin ABI version agrees with the plugin-visible surface")
struct PluginABITests {
    static let fixtures: String = {
        let file = "\(#filePath)"
        return String(file[..<(file.lastIndex(of: "/") ?? file.endIndex)]) + "/Fixtures/plugin-abi"
    }()

    static func read(_ path: String) -> String? {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while case let count = Glibc.read(fd, &chunk, chunk.count), count > 0 { bytes += chunk[..<count] }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The surface now: the script's output for this build.
    static func currentSurface() async throws -> [String] {
        let script =
            String(fixtures.dropLast("/Tests/AgentCoreTests/Fixtures/plugin-abi".count))
            + "/scripts/plugin-abi-symbols.sh"
        let run = try await TestProcess("bash", [script, buildDirectory])
        let result = await run.finish()
        try #require(result.status == 0, "scripts/plugin-abi-symbols.sh failed: \(result.errors)")
        return result.output.split(separator: "\n").map(String.init)
    }

    @Test("the recorded surface of the current ABI version is the built one, and no later version is recorded")
    func surfaceMatchesVersion() async throws {
        let version = PluginABI.version
        let recorded = try #require(
            Self.read("\(Self.fixtures)/v\(version).symbols"),
            "no surface recorded for ABI version \(version): run scripts/plugin-abi-symbols.sh > Tests/AgentCoreTests/Fixtures/plugin-abi/v\(version).symbols"
        ).split(separator: "\n").map(String.init)
        let current = try await Self.currentSurface()
        #expect(current.count > 100, "RoleKit's symbols found in libBLECore.so")
        let added = Set(current).subtracting(recorded).sorted()
        let removed = Set(recorded).subtracting(current).sorted()
        #expect(
            added.isEmpty && removed.isEmpty,
            """
            the plugin-visible surface changed since ABI version \(version) was recorded \
            (added \(added.count), removed \(removed.count)). If a plugin compiled against version \(version) \
            could not survive it (a stored property, a protocol requirement, a signature), bump \
            PluginABI.version and record the new surface as v\(version + 1).symbols; if the change is only \
            additive, record it again as v\(version).symbols. Added: \(added.prefix(10)) Removed: \(removed.prefix(10))
            """)
        #expect(
            Self.read("\(Self.fixtures)/v\(version + 1).symbols") == nil,
            "a later version is recorded: bump PluginABI.version")
    }

    @Test("every recorded version's surface differs from the previous one (a bump records a change)")
    func versionsDiffer() {
        var previous: String?
        for version in 1...PluginABI.version {
            guard let text = Self.read("\(Self.fixtures)/v\(version).symbols") else { continue }
            #expect(text != previous, "v\(version).symbols equals the version before it")
            previous = text
        }
    }

    @Test("a built plugin reports this version through its C symbol and its descriptor")
    func pluginReportsVersion() throws {
        let descriptor = try PluginLoader().load(name: "OneCopyProbe", role: .central, from: buildDirectory)
        #expect(descriptor.abiVersion == PluginABI.version)
        let handle = try #require(dlopen("\(buildDirectory)/libOneCopyProbe.so", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD))
        typealias Version = @convention(c) () -> UInt32
        let symbol = try #require(dlsym(handle, PluginABI.abiVersionSymbol))
        #expect(unsafeBitCast(symbol, to: Version.self)() == PluginABI.version)
    }
}
