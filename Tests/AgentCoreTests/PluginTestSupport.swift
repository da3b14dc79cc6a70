import AgentCore
import BLETesting
import ControlProtocol
import Glibc
import JSON
import RoleKit
import Synchronization

/// Writes `bytes` to `path`.
func writeBytes(_ path: String, _ bytes: [UInt8]) {
    let fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0o644)
    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    close(fd)
}

/// The contents of the file at `path`, or nil if it cannot be opened.
func readBytes(_ path: String) -> [UInt8]? {
    let input = open(path, O_RDONLY)
    guard input >= 0 else { return nil }
    defer { close(input) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while case let count = read(input, &chunk, chunk.count), count > 0 { bytes += chunk[..<count] }
    return bytes
}

/// Copies the file at `source` to `destination`.
func copyFile(_ source: String, _ destination: String) {
    writeBytes(destination, readBytes(source) ?? [])
}

/// A validated config for the role host: `plugins` maps each role to a plugin
/// name and its config; plugins load from the build directory.
func hostConfig(
    role: AgentConfig.Role, plugins: [AgentConfig.Role: (String, JSON)], stateDirectory: String
) throws -> AgentConfig {
    var roles = JSONObject()
    for (key, value) in plugins.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
        roles[key.rawValue] = ["plugin": .string(value.0), "config": value.1]
    }
    let json: JSON = [
        "version": 1, "role": .string(role.rawValue), "backend": "sim", "pluginDirectory": .string(buildDirectory),
        "restore": ["stateDirectory": .string(stateDirectory)], "roles": .object(roles),
    ]
    return try AgentConfig(json: json, file: "\(stateDirectory)/roles.json")
}

/// Records every event published on a bus.
final class EventRecorder: Sendable {
    private let events = Mutex<[AgentEvent]>([])

    init(_ bus: EventBus) {
        bus.observe { [weak self] event in self?.record(event) }
    }

    private func record(_ event: AgentEvent) { events.withLock { $0.append(event) } }

    var all: [AgentEvent] { events.withLock { $0 } }

    /// The role-state events' `state` values, in order.
    var rolePhases: [String] {
        all.filter { $0.kind == .state && $0.data["agentState"] == "role" }
            .compactMap { $0.data["roleState"]?["state"]?.stringValue }
    }
}

/// Calls a registered control method as the server would.
func callMethod(_ registry: MethodRegistry, _ method: String, _ params: JSON? = nil) async throws -> JSON {
    guard let handler = registry.handler(for: method) else { throw RPCError(.methodNotFound, method) }
    return try await handler(MethodCall(method: method, params: params, peer: PeerIdentity(client: 1, pid: 1, uid: 0)))
}
