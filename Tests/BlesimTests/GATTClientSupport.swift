import DBus

/// Remote GATT calls of a test client.
extension BlueZClient {
    static let characteristic = "org.bluez.GattCharacteristic1"
    static let emptyOptions = DBusValue.dictionary(key: .string, value: .variant, [])

    static func options(offset: UInt16? = nil, type: String? = nil) -> DBusValue {
        var entries: [(key: DBusValue, value: DBusValue)] = []
        if let offset { entries.append((.string("offset"), .variant(.uint16(offset)))) }
        if let type { entries.append((.string("type"), .variant(.string(type)))) }
        return .dictionary(key: .string, value: .variant, entries)
    }

    /// Discovers and connects the fixture's heart-rate device; returns once ServicesResolved.
    func connectHRM() async throws {
        try await adapter("StartDiscovery")
        guard await log.wait(until: { Signals.addedDevices($0)[Air.hrm] != nil }) else {
            throw HarnessError("the heart-rate device was not found")
        }
        _ = try await call(Air.hrm, "org.bluez.Device1", "Connect")
        guard await log.wait(until: { Self.changed($0, Air.hrm, "ServicesResolved", .boolean(true)) }) else {
            throw HarnessError("services were not resolved")
        }
    }

    func read(_ path: String, offset: UInt16? = nil, interface: String = characteristic) async throws -> [UInt8] {
        let reply = try await call(path, interface, "ReadValue", [Self.options(offset: offset)])
        guard case .bytes(let bytes)? = reply.first?.unwrapped else { throw HarnessError("ReadValue: \(reply)") }
        return bytes
    }

    func write(
        _ path: String, _ bytes: [UInt8], offset: UInt16? = nil, type: String? = nil,
        interface: String = characteristic
    ) async throws {
        _ = try await call(path, interface, "WriteValue", [.bytes(bytes), Self.options(offset: offset, type: type)])
    }

    /// Whether some PropertiesChanged on `path` set `name` to `value`.
    static func changed(_ messages: [DBusMessage], _ path: String, _ name: String, _ value: DBusValue) -> Bool {
        Signals.changes(messages).contains { $0.path == path && $0.changed[name] == value }
    }

    /// The Value updates signalled for `path`, in order.
    static func values(_ messages: [DBusMessage], _ path: String) -> [[UInt8]] {
        Signals.changes(messages).compactMap { change in
            guard change.path == path, case .bytes(let bytes)? = change.changed["Value"] else { return nil }
            return bytes
        }
    }

    /// Calls org.blesim.Control1.
    func control(_ member: String, _ arguments: [DBusValue]) async throws {
        _ = try await connection.call(
            destination: "org.bluez", path: ObjectPath("/org/blesim"), interface: "org.blesim.Control1",
            member: member, arguments: arguments)
    }
}
