import BLE
import BLETesting
import GATT
import IO
import JSON
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct RestorationStoreTests {
    let peripheral = PeripheralIdentifier(
        adapter: "00:11:22:33:44:55", address: "AA:BB:CC:DD:EE:FF", addressType: .random)

    func files(in directory: String) -> [String] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    func write(_ text: String, to path: String) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        _ = text.withCString { Glibc.write(fd, $0, strlen($0)) }
        close(fd)
    }

    func read(_ path: String) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var text = ""
        var buffer = [CChar](repeating: 0, count: 4096)
        while fgets(&buffer, Int32(buffer.count), file) != nil {
            text += String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        return text
    }

    var sampleState: RestorationState {
        RestorationState(
            knownPeripherals: [
                .init(
                    identifier: peripheral, adapter: "00:11:22:33:44:55", address: "AA:BB:CC:DD:EE:FF",
                    addressType: .random, name: "HR")
            ],
            desiredConnections: [peripheral],
            subscriptions: [
                CharacteristicReference(
                    peripheral: peripheral, service: .heartRate, characteristic: .heartRateMeasurement)
            ],
            services: [
                GATTService(
                    uuid: .battery,
                    characteristics: [
                        GATTCharacteristic(
                            uuid: .batteryLevel, properties: [.read, .notify], value: [99],
                            descriptors: [
                                GATTDescriptor(uuid: .characteristicUserDescription, value: Array("Level".utf8))
                            ])
                    ])
            ],
            advertising: AdvertisingData(serviceUUIDs: [.battery], localName: "bat"))
    }

    @Test func aSavedStateReadsBackEqual() throws {
        let directory = try temporaryDirectory()
        let store = try #require(RestorationStore(directory: directory, restoreIdentifier: "central-1"))
        #expect(try store.load() == .empty)
        try store.save(sampleState)
        #expect(try store.load() == .restored(sampleState))
        #expect(files(in: directory) == ["central-1.json"], "no temporary file is left behind")
    }

    @Test func savingAgainReplacesTheWholeState() throws {
        let directory = try temporaryDirectory()
        let store = try #require(RestorationStore(directory: directory, restoreIdentifier: "c"))
        try store.save(sampleState)
        let smaller = RestorationState(desiredConnections: [peripheral])
        try store.save(smaller)
        #expect(try store.load() == .restored(smaller))
    }

    @Test func aCorruptFileIsKeptAsideAndReportedNotThrownAway() throws {
        let directory = try temporaryDirectory()
        let store = try #require(RestorationStore(directory: directory, restoreIdentifier: "c"))
        write("{\"version\": 1, \"knownPeripherals\": [", to: store.path)
        guard case .corrupt(let reason, let preservedAt) = try store.load() else {
            Issue.record("expected corrupt")
            return
        }
        #expect(!reason.isEmpty)
        #expect(preservedAt == store.path + ".corrupt-1")
        #expect(read(preservedAt) == "{\"version\": 1, \"knownPeripherals\": [")
        #expect(try store.load() == .empty, "the manager starts empty")
        write("{\"version\": 1}", to: store.path)
        guard case .corrupt(let second, let secondPath) = try store.load() else {
            Issue.record("expected corrupt")
            return
        }
        #expect(second == "$.knownPeripherals: missing")
        #expect(secondPath == store.path + ".corrupt-2", "an earlier corrupt file is not overwritten")
    }

    @Test func badMembersAreNamedByPath() {
        var json = sampleState.json
        guard case .object(var root) = json, case .array(var subscriptions) = root["subscriptions"],
            case .object(var first) = subscriptions[0]
        else {
            Issue.record("unexpected shape")
            return
        }
        first["service"] = "nope"
        subscriptions[0] = .object(first)
        root["subscriptions"] = .array(subscriptions)
        json = .object(root)
        #expect(throws: RestorationDecodeError(path: "$.subscriptions[0].service", reason: "not a UUID")) {
            try RestorationState(json: json)
        }
    }

    @Test func restoreIdentifiersMustBeFileNameStems() {
        #expect(RestorationStore(directory: "/tmp", restoreIdentifier: "../etc/passwd") == nil)
        #expect(RestorationStore(directory: "/tmp", restoreIdentifier: "") == nil)
        #expect(RestorationStore(directory: "/tmp", restoreIdentifier: ".hidden") == nil)
        #expect(RestorationStore(directory: "/tmp", restoreIdentifier: "hr-monitor_2.v1") != nil)
    }

    @Test func aMissingDirectoryIsAClearError() {
        let store = RestorationStore(directory: "/nonexistent-bletests", restoreIdentifier: "x")
        #expect(throws: SystemError.self) { try store?.save(RestorationState()) }
    }
}
