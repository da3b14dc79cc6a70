import SimCore

#if canImport(Glibc)
    import Glibc
#endif

/// Finding and reading the scenario file.
enum ScenarioFile {
    /// The shipped default's path inside the repository.
    static let defaultRelativePath = "sim/scenarios/default.json"

    /// The default scenario's path: `sim/scenarios/default.json` under the current directory,
    /// else under a directory above the executable (for `.build/<config>/blesim`), else the
    /// installed one, `share/bleagent/scenarios/default.json` beside the executable's `bin`
    /// (`/usr/share/bleagent/scenarios/default.json` for `/usr/bin/blesim`).
    static func defaultPath() -> String? {
        var candidates = [defaultRelativePath]
        if let prefix = executableDirectory().flatMap(parent(of:)) {
            candidates.append(prefix + "/share/bleagent/scenarios/default.json")
        }
        var directory = executableDirectory()
        for _ in 0..<5 {
            guard let current = directory else { break }
            candidates.append(current + "/" + defaultRelativePath)
            directory = parent(of: current)
        }
        return candidates.first { access($0, R_OK) == 0 }
    }

    /// Reads and parses the scenario at `path`.
    static func load(_ path: String) throws(ScenarioError) -> Scenario {
        guard let text = readText(path) else {
            throw ScenarioError(path: "", message: "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        do {
            return try Scenario.parse(text)
        } catch {
            throw ScenarioError(path: "", message: "\(path): \(error)")
        }
    }

    private static func readText(_ path: String) -> String? {
        guard let handle = fopen(path, "r") else { return nil }
        defer { fclose(handle) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = fread(&buffer, 1, buffer.count, handle)
            if count > 0 { bytes += buffer[0..<count] }
            if count < buffer.count { break }
        }
        guard ferror(handle) == 0 else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func executableDirectory() -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        let path = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return parent(of: path)
    }

    private static func parent(of path: String) -> String? {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return nil }
        return String(path[..<slash])
    }
}
