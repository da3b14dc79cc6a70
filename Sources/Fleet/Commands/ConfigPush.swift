import AgentCore
import BLE
import Glibc
import IO
import JSON

/// A roles.json pushed to `<prefix>/config/set`: validated like a local one,
/// written atomically over the config file only when valid (the previous file
/// kept as `<file>.bak`), applied through ``Agent/reload(trigger:)``, and
/// answered on `<prefix>/config/result` (retained). A push equal to the file
/// in force (the retained message arriving again at each reconnection) is
/// `unchanged` and applies nothing.
struct ConfigPush: Sendable {
    /// The outcome published on `config/result`.
    enum Outcome: Sendable, Hashable {
        case applied(role: String)
        case unchanged
        case rejected([ConfigIssue])
        case failed(String)
    }

    /// What validation found.
    enum Validation: Sendable {
        case valid(AgentConfig)
        case invalid([ConfigIssue])
    }

    static let maxBytes = 1 << 20

    let configPath: String

    /// Validates `payload` against the config file's location (relative paths
    /// resolve as they would in the file). No I/O but the checks of the files it names.
    func validate(_ payload: [UInt8]) -> Validation {
        guard payload.count <= Self.maxBytes else {
            return .invalid([ConfigIssue(path: "", message: "the pushed config is longer than \(Self.maxBytes) bytes")])
        }
        let json: JSON
        do {
            json = try JSON(parsing: payload)
        } catch {
            return .invalid([ConfigIssue(path: "", message: "not valid JSON: \(error)")])
        }
        var issues: [ConfigIssue] = []
        var config: AgentConfig?
        do {
            config = try AgentConfig(json: json, file: configPath, reportedAs: configPath)
        } catch {
            issues = error.issues
        }
        if json["fleet"] == nil {
            let message = "a pushed config must keep a fleet section (without it the node would leave the fleet)"
            issues.append(ConfigIssue(path: "fleet", message: message))
        }
        guard issues.isEmpty, let config else { return .invalid(issues) }
        return .valid(config)
    }

    /// Whether the file in force already holds `payload`'s JSON (blocking read).
    func isInForce(_ payload: [UInt8]) -> Bool {
        guard let current = try? readFile(configPath), let currentJSON = try? JSON(parsing: current),
            let pushed = try? JSON(parsing: payload)
        else { return false }
        return currentJSON == pushed
    }

    /// Keeps the file in force as `.bak`, then replaces it with `payload`,
    /// each atomically (blocking).
    func write(_ payload: [UInt8]) throws(SystemError) {
        let directory = String(configPath[..<(configPath.lastIndex(of: "/") ?? configPath.startIndex)])
        if let current = try? readFile(configPath) {
            try AtomicFile.replace("\(configPath).bak", with: current, temporary: "\(configPath).bak.tmp")
        }
        try AtomicFile.replace(configPath, with: payload, temporary: "\(configPath).push.tmp")
        try AtomicFile.syncDirectory(directory.isEmpty ? "/" : directory)
    }

    /// The `config/result` payload.
    static func resultJSON(_ outcome: Outcome, digest: String, at milliseconds: Int64) -> JSON {
        var object: JSONObject = ["crc32": .string(digest), "at": .int(milliseconds)]
        switch outcome {
        case .applied(let role):
            object["status"] = "applied"
            object["role"] = .string(role)
        case .unchanged:
            object["status"] = "unchanged"
        case .rejected(let issues):
            object["status"] = "rejected"
            object["errors"] = .array(issues.map { ["path": .string($0.path), "message": .string($0.message)] })
        case .failed(let why):
            object["status"] = "failed"
            object["errors"] = .array([["path": "", "message": .string(why)]])
        }
        return .object(object)
    }

    private func readFile(_ path: String) throws(SystemError) -> [UInt8] {
        try RegularFile.read(path, limit: Self.maxBytes)
    }
}
