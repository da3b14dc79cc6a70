import BLETesting
import DBus
import Synchronization

/// Signals received by a test client, kept in order, with waits that end on an event or a
/// generous deadline (never a sleep that hopes).
final class SignalLog: Sendable {
    private struct Waiter {
        let id: Int
        let predicate: @Sendable ([DBusMessage]) -> Bool
        let continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var messages: [DBusMessage] = []
        var waiters: [Waiter] = []
        var nextID = 0
    }

    private let state = Mutex(State())

    init(_ stream: DBusSignalStream) {
        Task { [weak self] in
            for await message in stream {
                guard let self else { return }
                self.append(message)
            }
        }
    }

    var messages: [DBusMessage] { state.withLock { $0.messages } }

    private func append(_ message: DBusMessage) {
        let ready = state.withLock { state -> [Waiter] in
            state.messages.append(message)
            let messages = state.messages
            let ready = state.waiters.filter { $0.predicate(messages) }
            state.waiters.removeAll { waiter in ready.contains { $0.id == waiter.id } }
            return ready
        }
        for waiter in ready { waiter.continuation.resume(returning: true) }
    }

    /// Waits until `predicate` holds for the signals so far; false if `seconds` pass first.
    func wait(within seconds: Double = 60, until predicate: @escaping @Sendable ([DBusMessage]) -> Bool) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let id = state.withLock { state -> Int? in
                if predicate(state.messages) { return nil }
                let id = state.nextID
                state.nextID += 1
                state.waiters.append(Waiter(id: id, predicate: predicate, continuation: continuation))
                return id
            }
            guard let id else {
                continuation.resume(returning: true)
                return
            }
            Task {
                try? await Task.sleep(for: .seconds(seconds))
                let expired = self.state.withLock { state -> Waiter? in
                    guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                    return state.waiters.remove(at: index)
                }
                expired?.continuation.resume(returning: false)
            }
        }
    }
}

/// A D-Bus client of blesim's org.bluez, as an application would be.
struct BlueZClient {
    let connection: DBusConnection
    let log: SignalLog

    static func connect(_ bus: PrivateBus) async throws -> BlueZClient {
        let connection = try await DBusConnection.connect(address: bus.address)
        let stream = try await connection.signals(MatchRule(sender: "org.bluez"))
        return BlueZClient(connection: connection, log: SignalLog(stream))
    }

    func call(
        _ path: String, _ interface: String, _ member: String, _ arguments: [DBusValue] = []
    ) async throws
        -> [DBusValue]
    {
        try await connection.call(
            destination: "org.bluez", path: ObjectPath(path), interface: interface, member: member,
            arguments: arguments
        ).arguments()
    }

    func adapter(_ member: String, _ arguments: [DBusValue] = [], path: String = "/org/bluez/hci0") async throws {
        _ = try await call(path, "org.bluez.Adapter1", member, arguments)
    }

    /// The D-Bus error name `body` fails with, or nil when it succeeds.
    func errorName(_ body: () async throws -> Void) async -> String? {
        do {
            try await body()
            return nil
        } catch let error as DBusError {
            return error.name.rawValue
        } catch {
            return "\(error)"
        }
    }

    func property(_ path: String, _ interface: String, _ name: String) async throws -> DBusValue? {
        try await call(path, "org.freedesktop.DBus.Properties", "Get", [.string(interface), .string(name)]).first?
            .unwrapped
    }

    func setProperty(_ path: String, _ interface: String, _ name: String, _ value: DBusValue) async throws {
        _ = try await call(
            path, "org.freedesktop.DBus.Properties", "Set", [.string(interface), .string(name), .variant(value)])
    }

    /// GetManagedObjects: path -> interface -> property -> value.
    func managedObjects() async throws -> [String: [String: [String: DBusValue]]] {
        let reply = try await call("/", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects")
        guard case .dictionary(_, _, let objects)? = reply.first else { return [:] }
        var result: [String: [String: [String: DBusValue]]] = [:]
        for object in objects {
            guard let path = object.key.stringValue else { continue }
            result[path] = Self.interfaces(object.value)
        }
        return result
    }

    static func interfaces(_ value: DBusValue) -> [String: [String: DBusValue]] {
        guard case .dictionary(_, _, let interfaces) = value else { return [:] }
        var result: [String: [String: DBusValue]] = [:]
        for interface in interfaces {
            guard let name = interface.key.stringValue, case .dictionary(_, _, let properties) = interface.value
            else { continue }
            var values: [String: DBusValue] = [:]
            for property in properties {
                if let key = property.key.stringValue { values[key] = property.value.unwrapped }
            }
            result[name] = values
        }
        return result
    }
}

/// Reading the signals a client received.
enum Signals {
    /// Device1 objects added: path -> properties.
    static func addedDevices(_ messages: [DBusMessage]) -> [String: [String: DBusValue]] {
        var found: [String: [String: DBusValue]] = [:]
        for message in messages where message.member == "InterfacesAdded" {
            guard let arguments = try? message.arguments(), arguments.count == 2,
                let path = arguments[0].stringValue,
                let device = BlueZClient.interfaces(arguments[1])["org.bluez.Device1"]
            else { continue }
            found[path] = device
        }
        return found
    }

    /// PropertiesChanged signals: (path, interface, changed).
    static func changes(_ messages: [DBusMessage]) -> [(path: String, interface: String, changed: [String: DBusValue])]
    {
        messages.compactMap { message in
            guard message.member == "PropertiesChanged", let path = message.path?.rawValue,
                let arguments = try? message.arguments(), arguments.count == 3,
                let interface = arguments[0].stringValue, case .dictionary(_, _, let entries) = arguments[1]
            else { return nil }
            var changed: [String: DBusValue] = [:]
            for entry in entries { if let key = entry.key.stringValue { changed[key] = entry.value.unwrapped } }
            return (path, interface, changed)
        }
    }

    /// How many RSSI updates `path` received.
    static func rssiUpdates(_ messages: [DBusMessage], path: String) -> Int {
        changes(messages).filter { $0.path == path && $0.changed["RSSI"] != nil }.count
    }

    /// Whether the adapter's Discovering property was last announced as `value`.
    static func discovering(_ messages: [DBusMessage], is value: Bool, path: String = "/org/bluez/hci0") -> Bool {
        changes(messages).last { $0.path == path && $0.changed["Discovering"] != nil }?.changed["Discovering"]
            == .boolean(value)
    }
}
