import Glibc
import JSON

/// One bleagent on a rig's bus (backend `bluez`, `DBUS_SYSTEM_BUS_ADDRESS` set to the rig's bus),
/// with the Bench plugin loaded from the release directory, started and awaited on its READY=1.
struct AgentProcess {
    let pid: pid_t
    let socket: String
    /// Milliseconds from spawn to READY=1 (sd_notify), the role running.
    let startMilliseconds: Double

    /// Starts an agent in `role` on `adapter`, with `bluez` options (roles.json's `bluez` object).
    static func start(
        _ name: String, role: String, adapter: String, bluez: JSON = [:], on rig: Rig, installation: Installation
    ) throws -> AgentProcess {
        let directory = try RunDirectory.sub(rig.directory, name)
        let config: JSON = [
            "version": 1, "role": .string(role), "backend": "bluez", "adapter": .string(adapter),
            "restore": ["identifier": .string(name), "stateDirectory": .string(directory + "/state")],
            "control": ["socket": .string(directory + "/control.sock")],
            "pluginDirectory": .string(installation.release),
            "bluez": bluez,
            "roles": [role: ["plugin": "Bench"]],
        ]
        try writeText(config.serialized(.pretty), to: directory + "/roles.json")
        let notify = try NotifySocket(path: directory + "/notify.sock")
        defer { notify.close() }
        let log = open(directory + "/agent.log", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        defer { close(log) }
        let clock = Stopwatch()
        let pid = try Children.spawn(
            [installation.agent, "--config", directory + "/roles.json"],
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": rig.address, "NOTIFY_SOCKET": directory + "/notify.sock"],
            streams: .init(output: log, error: log))
        while clock.seconds < 30 {
            guard let message = notify.receive(timeout: 0.5) else {
                if Children.exited(pid) { break }
                continue
            }
            guard message.contains("READY=1") else { continue }
            let started = clock.seconds * 1000
            guard message.contains("running") else {
                Children.stop(pid)
                throw BenchFailure("agent \(name) is ready but its role is not running: \(message)")
            }
            return AgentProcess(pid: pid, socket: directory + "/control.sock", startMilliseconds: started)
        }
        Children.stop(pid)
        let output = readText(directory + "/agent.log") ?? ""
        throw BenchFailure("agent \(name) sent no READY=1 within 30 s:\n\(output.suffix(2000))")
    }

    /// A control API call (one connection per call).
    func call(_ method: String, _ params: JSON? = nil, timeout: Double = 30) throws -> JSON {
        try ControlConnection(path: socket).call(method, params, timeout: timeout)
    }

    /// SIGTERM, then SIGKILL after 5 s.
    func stop() { Children.stop(pid) }
}

extension RunDirectory {
    /// `parent/name`, created.
    static func sub(_ parent: String, _ name: String) throws -> String {
        let directory = parent + "/" + name
        guard mkdir(directory, 0o700) == 0 || errno == EEXIST else {
            throw BenchFailure("mkdir \(directory): \(String(cString: strerror(errno)))")
        }
        return directory
    }
}

/// The datagram socket an agent sends its sd_notify messages to.
struct NotifySocket {
    let fd: Int32

    init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw BenchFailure("socket: \(String(cString: strerror(errno)))") }
        unlink(path)
        try withAddress(path) { address, length in
            guard bind(fd, address, length) == 0 else {
                throw BenchFailure("bind \(path): \(String(cString: strerror(errno)))")
            }
        }
    }

    /// The next message, or nil after `timeout` seconds.
    func receive(timeout: Double) -> String? {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, Int32(timeout * 1000)) > 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(fd, &buffer, buffer.count, 0)
        return count > 0 ? String(decoding: buffer[0..<count], as: UTF8.self) : nil
    }

    func close() { Glibc.close(fd) }
}

/// Runs `body` with a `sockaddr_un` for `path`.
func withAddress<T>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) throws -> T) throws -> T {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
        throw BenchFailure("socket path too long: \(path)")
    }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        for (index, byte) in bytes.enumerated() { raw[index] = byte }
    }
    return try withUnsafePointer(to: &address) { pointer in
        try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            try body($0, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
    }
}
