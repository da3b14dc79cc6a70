import BLETesting
import DBus
import Foundation
import Glibc
import IO

/// blesim (`$BLESIM`) on a private bus with a generated scenario, ready once it printed its ready line.
struct Sim {
    let process: ChildProcess
    let scenario: String

    static func start(bus: PrivateBus, scenario text: String, arguments extra: [String] = []) async throws -> Sim {
        let scenario = bus.directory + "/scenario.json"
        try text.write(toFile: scenario, atomically: true, encoding: .utf8)
        let executable = ProcessInfo.processInfo.environment["BLESIM"] ?? ".build/release/blesim"
        let process = try await ChildProcess.spawn(
            executable, ["--address", bus.address, "--scenario", scenario] + extra,
            standardOutput: .collect(limit: 1 << 20), deathSignal: SIGTERM)
        let ready = await process.standardOutput?.wait(timeout: .seconds(120)) { bytes in
            String(decoding: bytes, as: UTF8.self).contains("blesim: ready")
        }
        guard ready == true else {
            process.signal(SIGKILL)
            throw PrivateBus.Failure.setup("blesim did not become ready")
        }
        return Sim(process: process, scenario: scenario)
    }

    /// SIGTERM without waiting (clean-up on an error path).
    func stop() { process.signal(SIGTERM) }

    /// SIGTERM, and the exit awaited, so the next row measures a quiet machine.
    func finish() async { await process.terminate(within: .seconds(10)) }
}

func adapter(_ connection: DBusConnection, _ member: String, _ arguments: [DBusValue] = []) async throws {
    _ = try await connection.call(
        destination: "org.bluez", path: ObjectPath("/org/bluez/hci0"), interface: "org.bluez.Adapter1",
        member: member, arguments: arguments)
}

func characteristic(_ connection: DBusConnection, _ path: String, _ member: String) async throws {
    _ = try await connection.call(
        destination: "org.bluez", path: ObjectPath(path), interface: "org.bluez.GattCharacteristic1", member: member)
}

/// How many signals of `stream` satisfy `predicate` during the next `seconds` (the measurement window).
func count(
    _ stream: DBusSignalStream, seconds: Int, where predicate: @escaping @Sendable (DBusMessage) -> Bool
) async throws -> Int {
    let counter = Task { () -> Int in
        var total = 0
        for await message in stream where predicate(message) { total += 1 }
        return total
    }
    try await Task.sleep(for: .seconds(seconds))
    stream.finish()
    return await counter.value
}

/// Packets read from the AcquireNotify sockets during `seconds`, waiting on poll (events, not sleeps).
func readPackets(_ sockets: [Int32], seconds: Int) -> Int {
    var polls = sockets.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
    var buffer = [UInt8](repeating: 0, count: 600)
    var total = 0
    let end = Date().addingTimeInterval(Double(seconds))
    while true {
        let left = end.timeIntervalSinceNow
        guard left > 0 else { break }
        guard poll(&polls, nfds_t(polls.count), Int32(left * 1000) + 1) > 0 else { continue }
        for index in polls.indices where polls[index].revents & Int16(POLLIN) != 0 {
            while recv(polls[index].fd, &buffer, buffer.count, Int32(MSG_DONTWAIT)) > 0 { total += 1 }
        }
    }
    return total
}
