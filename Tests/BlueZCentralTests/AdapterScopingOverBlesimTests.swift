import BLE
import BLETesting
import BlueZ
import DBus
import GATT
import Testing

/// Adapter scoping against blesim with two adapters: a PeripheralManager serves and advertises on hci0, a
/// CentralManager on hci1 connects to it. bluetoothd (and blesim) then make a Device1 under hci0 for the central
/// that connected in; the central must neither report it, nor know it, nor drive it.
@Suite("Adapter scoping over blesim", .serialized, .timeLimit(.minutes(1)))
struct AdapterScopingOverBlesimTests {
    static let hci0Address = "00:AA:01:00:00:00"
    static let hci1Address = "00:AA:01:00:00:01"

    @Test(
        "a central on hci1 connected to hci0's peripheral reports, lists and drives only hci1's devices, not the Device1 hci0 makes for it"
    )
    func centralOnHci1IgnoresHci0sDevices() async throws {
        try await TestBed.with(blesim: .json(#"{ "adapters": 2 }"#)) { bed in
            let peripheralConnection = try await bed.connect()
            let server = PeripheralManager(
                backend: try await BlueZPeripheralBackend.start(connection: peripheralConnection),
                options: .init(adapter: "hci0"))
            for await state in server.stateUpdates() where state == .poweredOn { break }
            try await server.add(
                GATTService(
                    uuid: .battery, characteristics: [GATTCharacteristic(uuid: .batteryLevel, properties: [.read])]))
            let answers = Task {
                for await request in server.requests() { _ = request.respond(with: [77]) }
            }
            defer { answers.cancel() }
            try await server.startAdvertising(AdvertisingData(serviceUUIDs: [.battery], localName: "gw-hci0"))

            let client = try await bed.connect()
            let central = CentralManager(
                backend: try await BlueZCentralBackend(connection: client), options: .init(adapter: "hci1"))
            _ = await first(central.stateUpdates()) { $0 == .poweredOn }
            let connections = central.connectionEvents()
            let scan = try central.scanForPeripherals(options: ScanOptions(allowDuplicates: true))
            let found = try #require(await first(scan) { $0.name == "gw-hci0" })
            let own = PeripheralIdentifier(adapter: Self.hci1Address, address: Self.hci0Address, addressType: .public)
            #expect(found.identifier == own)
            let peripheral = try #require(central.retrievePeripherals(withIdentifiers: [own]).first)
            try await central.connect(peripheral)
            let service = try #require(try await peripheral.discoverServices([.battery]).first)
            let level = try #require(try await peripheral.discoverCharacteristics([.batteryLevel], for: service).first)
            // A round trip on the central's own connection: every signal blesim sent before answering it (the
            // Device1 it made under hci0 for this central when the link came up) has been handled.
            #expect(try await peripheral.readValue(for: level) == [77])

            let visitor = PeripheralIdentifier(
                adapter: Self.hci0Address, address: Self.hci1Address, addressType: .public)
            #expect(central.statistics.otherAdapterReports > 0, "hci0's Device1 for this central was seen")
            #expect(central.retrievePeripherals(withIdentifiers: [visitor]).isEmpty, "and is not this central's")
            #expect(central.retrieveConnectedPeripherals(withServices: []).map(\.identifier) == [own])
            central.stopScan()
            var reported: Set<PeripheralIdentifier> = []
            for await discovery in scan { reported.insert(discovery.identifier) }
            #expect(!reported.contains(visitor), "hci0's visitor was reported: \(reported)")
            try await central.cancelConnection(peripheral)
            var events: [ConnectionEvent] = []
            for await event in connections {
                events.append(event)
                if case .disconnected = event { break }
            }
            #expect(events == [.connected(own), .disconnected(own, nil)], "link events of hci1's device only")
        }
    }
}
