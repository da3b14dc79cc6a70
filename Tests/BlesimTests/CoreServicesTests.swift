import DBus
import Foundation
import Testing

/// bluetoothd's own services (GAP, GATT, Device Information) next to a registered application,
/// compared with what a BlueZ central saw of the real bluetoothd 5.66 in the VM
/// (Tests/VM/fixtures/gatt-database-example-gatt-server.txt, made by Tests/VM/gatt-database-dump.sh).
@Suite("Peripheral role: bluetoothd's own services as the VM recorded them", .serialized)
struct CoreServicesTests {
    /// One GattService1 / GattCharacteristic1 / GattDescriptor1 line of the fixture.
    struct Entry: Equatable, CustomStringConvertible {
        var kind: String
        /// The path relative to the device (`service0008/char0009`).
        var path: String
        var uuid: String
        /// The characteristic's flags (nil for services and descriptors).
        var flags: [String]?
        /// What ReadValue returned, hex (only where the fixture has a value).
        var value: String?

        var description: String {
            "\(kind) \(path) \(uuid) \(flags?.joined(separator: ",") ?? "") \(value ?? "")"
        }
    }

    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../VM/fixtures/gatt-database-example-gatt-server.txt").path

    /// The fixture's lines: kind, path, uuid, flags, value (`-` means none).
    static func recorded() throws -> (entries: [Entry], uuids: Set<String>) {
        let text = try String(contentsOfFile: fixture, encoding: .utf8)
        var entries: [Entry] = []
        var uuids: Set<String> = []
        for line in text.split(separator: "\n").map(String.init) {
            if line.hasPrefix("# central: services resolved; UUIDs ") {
                uuids = Set(line.split(separator: "'").map(String.init).filter { $0.count == 36 })
            }
            if line.hasPrefix("#") { continue }
            let words = line.split(separator: " ").map(String.init)
            guard words.count >= 3 else { continue }
            var fields: [String: String] = [:]
            for word in words.dropFirst(2) {
                let parts = word.split(separator: "=", maxSplits: 1).map(String.init)
                if parts.count == 2 { fields[parts[0]] = parts[1] }
            }
            let flags = (fields["flags"] ?? "").split(separator: ",").map(String.init)
            entries.append(
                Entry(
                    kind: words[0], path: words[1], uuid: fields["uuid"] ?? "",
                    flags: words[0] == "characteristic" ? flags : nil, value: fields["value"]))
        }
        return (entries, uuids)
    }

    static func strings(_ value: DBusValue?) -> [String] {
        guard case .array(_, let items)? = value else { return [] }
        return items.compactMap { if case .string(let s) = $0 { s } else { nil } }
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.isEmpty ? "-" : bytes.map { String(format: "%02x", $0) }.joined()
    }

    @Test(
        "a central on hci1 sees GATT at 0x0008, Device Information at 0x0012 (PnP ID 026b1d46024205) and example-gatt-server's services from 0x0015, as in the VM",
        .enabled(if: PeripheralRoleTests.available))
    func centralSeesBluetoothdServices() async throws {
        let (recorded, recordedUUIDs) = try Self.recorded()
        #expect(recorded.count == 27)
        let bench = try await PeripheralRoleTests.Bench.start()
        try await bench.connect()
        let objects = try await bench.client.managedObjects()
        let prefix = bench.peripheral + "/"
        var seen: [Entry] = []
        for (path, interfaces) in objects.sorted(by: { $0.key < $1.key }) where path.hasPrefix(prefix) {
            let relative = String(path.dropFirst(prefix.count))
            if let service = interfaces["org.bluez.GattService1"], case .string(let uuid)? = service["UUID"] {
                seen.append(Entry(kind: "service", path: relative, uuid: uuid))
            } else if let chrc = interfaces[BlueZClient.characteristic], case .string(let uuid)? = chrc["UUID"] {
                seen.append(
                    Entry(kind: "characteristic", path: relative, uuid: uuid, flags: Self.strings(chrc["Flags"])))
            } else if let desc = interfaces["org.bluez.GattDescriptor1"], case .string(let uuid)? = desc["UUID"] {
                seen.append(Entry(kind: "descriptor", path: relative, uuid: uuid))
            }
        }
        // Every object, at the recorded path (handles), with the recorded UUID and flags.
        let shape = recorded.map { Entry(kind: $0.kind, path: $0.path, uuid: $0.uuid, flags: $0.flags) }
        #expect(seen == shape)
        // bluetoothd's own readable values, as the real one answered (the Database Hash is not
        // computed by blesim; CCC values are per link and not modelled).
        for entry in recorded where entry.path.hasPrefix("service0012/") || entry.path.hasPrefix("service0008/") {
            let databaseHash = "00002b2a-0000-1000-8000-00805f9b34fb"
            guard entry.kind == "characteristic", let value = entry.value, entry.uuid != databaseHash else { continue }
            let read = try await bench.client.read(bench.peripheral + "/" + entry.path)
            #expect(Self.hex(read) == value, "\(entry.path)")
        }
        // Device1.UUIDs: GAP (hidden as an object), GATT, Device Information and the application's.
        let uuids = Self.strings(try await bench.client.property(bench.peripheral, "org.bluez.Device1", "UUIDs"))
        #expect(Set(uuids) == recordedUUIDs && recordedUUIDs.count == 6)
        _ = bench.sim
    }
}
