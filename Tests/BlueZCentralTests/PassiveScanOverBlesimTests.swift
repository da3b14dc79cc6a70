import BLE
import BLETesting
import BlueZ
import DBus
import GATT
import Testing

/// Passive scanning through an advertisement monitor against blesim: with `--experimental` (as bluetoothd -E)
/// each adapter serves AdvertisementMonitorManager1; without it the scan falls back to active discovery.
@Suite("Passive scanning over blesim", .serialized, .timeLimit(.minutes(2)))
struct PassiveScanOverBlesimTests {
    /// A BTHome sensor, an iBeacon and a phone, each advertising every 200 ms.
    static let air = TestBed.Scenario.json(
        """
        { "adapters": 1, "devices": [
          { "address": "A4:C1:38:00:00:01", "intervalMs": 200, "connectable": false,
            "advertising": { "flags": 6, "name": "ATC_000001" },
            "sensor": { "format": "bthome", "measureSeconds": 1,
                        "objects": [ { "kind": "temperature", "base": 21.5 } ] } },
          { "address": "D0:00:00:00:00:01", "intervalMs": 200, "connectable": false,
            "advertising": { "flags": 6, "manufacturerData": [
              { "company": "0x004C", "data": "0215e2c56db5dffb48d2b060d0f5a71096e000010002c5" } ] } },
          { "address": "7E:00:00:00:00:01", "addressType": "random", "intervalMs": 200,
            "advertising": { "flags": 26, "name": "Phone",
                             "manufacturerData": [ { "company": "0x004C", "data": "1005031c0f2d5b" } ] } }
        ] }
        """)
    static let sensor = "A4:C1:38:00:00:01"
    static let beacon = "D0:00:00:00:00:01"
    static let phone = "7E:00:00:00:00:01"

    static func bthome() throws -> AdvertisementMonitor {
        AdvertisementMonitor(patterns: [try .serviceData16(0xFCD2)])
    }

    static func iBeacon() throws -> AdvertisementMonitor {
        AdvertisementMonitor(patterns: [try .manufacturerData(0x004C, prefix: [0x02, 0x15])])
    }

    static func central(_ bed: TestBed) async throws -> CentralManager {
        let central = CentralManager(backend: try await BlueZCentralBackend(connection: try await bed.connect()))
        _ = await first(central.stateUpdates()) { $0 == .poweredOn }
        return central
    }

    static func discovering(_ connection: DBusConnection) async throws -> Bool? {
        let reply = try await connection.call(
            destination: "org.bluez", path: ObjectPath("/org/bluez/hci0"), interface: "org.freedesktop.DBus.Properties",
            member: "Get", arguments: [.string("org.bluez.Adapter1"), .string("Discovering")])
        return try reply.arguments().first?.unwrapped.boolValue
    }

    /// The addresses of `scan`'s discoveries until `address` was reported `count` times.
    static func heard(_ scan: DiscoveryStream, until address: String, count: Int) async -> [String: Int] {
        var seen: [String: Int] = [:]
        for await discovery in scan {
            seen[discovery.address, default: 0] += 1
            if seen[address, default: 0] >= count { break }
        }
        return seen
    }

    @Test(
        "a passive scan gets the matching sensor's service data, never the devices its patterns do not match, and the adapter does not discover"
    )
    func passiveScanHearsOnlyItsPatterns() async throws {
        try await TestBed.with(blesim: Self.air, options: ["--experimental"]) { bed in
            let central = try await Self.central(bed)
            let scan = try central.scanForPeripherals(
                options: ScanOptions(allowDuplicates: true, monitor: try Self.bthome()))
            #expect(await first(scan.modeUpdates()) { $0 == .passive } == .passive, "mode: \(scan.mode)")
            let seen = await Self.heard(scan, until: Self.sensor, count: 5)
            #expect(seen.keys.sorted() == [Self.sensor], "the beacon and the phone advertise as often: \(seen)")
            #expect(central.statistics.monitorDevicesFound == 1)
            #expect(try await Self.discovering(try await bed.connect()) == false, "no discovery session runs")
            let device = try #require(
                await first(scan) { $0.address == Self.sensor && $0.advertisement.serviceData[.bthome] != nil })
            #expect(device.advertisement.serviceData[.bthome]?.first == 0x40, "BTHome v2 device info, unencrypted")
        }
    }

    @Test("two clients' monitors each hear their own devices, and one stopping leaves the other's running")
    func twoClientsMonitors() async throws {
        try await TestBed.with(blesim: Self.air, options: ["--experimental"]) { bed in
            let beacons = try await Self.central(bed)
            let sensors = try await Self.central(bed)
            let beaconScan = try beacons.scanForPeripherals(
                options: ScanOptions(allowDuplicates: true, monitor: try Self.iBeacon()))
            let sensorScan = try sensors.scanForPeripherals(
                options: ScanOptions(allowDuplicates: true, monitor: try Self.bthome()))
            // A static beacon's Device1 changes only with its RSSI (bluetoothd reports no duplicate data without
            // a discovery asking for it): its first report is what this client gets for sure.
            let beaconsSeen = await Self.heard(beaconScan, until: Self.beacon, count: 1)
            #expect(beaconsSeen.keys.sorted() == [Self.beacon], "\(beaconsSeen)")
            let sensorsSeen = await Self.heard(sensorScan, until: Self.sensor, count: 3)
            #expect(sensorsSeen.keys.sorted() == [Self.sensor], "\(sensorsSeen)")
            #expect(beaconScan.mode == .passive && sensorScan.mode == .passive)
            beacons.stopScan()
            for await _ in beaconScan {}
            let stillSeen = await Self.heard(sensorScan, until: Self.sensor, count: 3)
            #expect(stillSeen.keys.sorted() == [Self.sensor], "\(stillSeen)")
            #expect(sensorScan.mode == .passive)
            #expect(try await Self.discovering(try await bed.connect()) == false)
        }
    }

    @Test(
        "RSSI thresholds: a monitor whose high threshold the beacon passes reports it once found; one whose threshold it never passes reports nothing while other scans go on"
    )
    func rssiThresholds() async throws {
        try await TestBed.with(blesim: Self.air, options: ["--experimental"]) { bed in
            func beaconMonitor(high: Int) throws -> AdvertisementMonitor {
                AdvertisementMonitor(
                    patterns: try Self.iBeacon().patterns,
                    rssiThresholds: .init(high: high, highTimeout: 1, low: -127, lowTimeout: 1))
            }
            let loud = try await Self.central(bed)
            let quiet = try await Self.central(bed)
            let sensors = try await Self.central(bed)
            let loudScan = try loud.scanForPeripherals(
                options: ScanOptions(allowDuplicates: true, monitor: try beaconMonitor(high: -126)))
            let quietScan = try quiet.scanForPeripherals(
                options: ScanOptions(allowDuplicates: true, monitor: try beaconMonitor(high: 20)))
            let sensorScan = try sensors.scanForPeripherals(
                options: ScanOptions(allowDuplicates: true, monitor: try Self.bthome()))
            let quietHeard = Task { await Self.heard(quietScan, until: Self.beacon, count: 1) }
            #expect(await first(quietScan.modeUpdates()) { $0 == .passive } == .passive, "mode: \(quietScan.mode)")
            #expect(await first(loudScan) { $0.address == Self.beacon } != nil, "found above -126 dBm")
            #expect(loud.statistics.monitorDevicesFound == 1)
            // The beacon advertises as often as the sensor: ten sensor reports later, it has been heard many times.
            let sensorsSeen = await Self.heard(sensorScan, until: Self.sensor, count: 10)
            #expect(sensorsSeen.keys.sorted() == [Self.sensor], "\(sensorsSeen)")
            quiet.stopScan()
            #expect(await quietHeard.value.isEmpty, "never above 20 dBm, never found")
            #expect(quiet.statistics.monitorDevicesFound == 0)
        }
    }

    @Test(
        "RSSI thresholds: a found beacon that goes silent is lost after the low timeout, and found again when it advertises again (as the VM checks with bluetoothd)"
    )
    func lostWhenSilentFoundAgain() async throws {
        try await TestBed.with(blesim: Self.air, options: ["--experimental"]) { bed in
            let central = try await Self.central(bed)
            let control = try await bed.connect()
            func silence(_ silenced: Bool) async throws {
                _ = try await control.call(
                    destination: "org.bluez", path: ObjectPath("/org/blesim"), interface: "org.blesim.Control1",
                    member: "Silence", arguments: [.string(Self.beacon), .boolean(silenced)])
            }
            let scan = try central.scanForPeripherals(
                options: ScanOptions(
                    allowDuplicates: true,
                    monitor: AdvertisementMonitor(
                        patterns: try Self.iBeacon().patterns,
                        rssiThresholds: .init(high: -126, highTimeout: 1, low: -127, lowTimeout: 1))))
            /// DeviceLost makes no report and a queued report may predate it: the counters say what bluetoothd
            /// called, read until they move.
            func until(_ condition: (CentralStatistics) -> Bool) async throws -> Bool {
                let deadline = ContinuousClock.now + testDeadline
                while !condition(central.statistics) {
                    guard ContinuousClock.now < deadline else { return false }
                    try await Task.sleep(for: .milliseconds(50))
                }
                return true
            }
            #expect(await first(scan) { $0.address == Self.beacon } != nil, "found above -126 dBm")
            try await silence(true)
            #expect(try await until { $0.monitorDevicesLost == 1 }, "lost once unheard for the low timeout")
            #expect(central.statistics.monitorDevicesFound == 1)
            try await silence(false)
            #expect(try await until { $0.monitorDevicesFound == 2 }, "found again once heard again")
            #expect(await first(scan) { $0.address == Self.beacon } != nil, "and reported")
        }
    }

    @Test(
        "without the monitor manager (bluetoothd without -E) a passive scan falls back to active discovery, says why, and still hears the sensor"
    )
    func fallsBackWithoutMonitorManager() async throws {
        try await TestBed.with(blesim: Self.air) { bed in
            let central = try await Self.central(bed)
            let scan = try central.scanForPeripherals(
                options: ScanOptions(allowDuplicates: true, monitor: try Self.bthome()))
            let mode = await first(scan.modeUpdates()) { !$0.isPassive }
            guard case .fallback(let reason) = mode else {
                Issue.record("mode \(String(describing: mode))")
                return
            }
            #expect(reason.contains("AdvertisementMonitorManager1"), "\(reason)")
            #expect(await first(scan) { $0.address == Self.sensor } != nil)
            #expect(try await Self.discovering(try await bed.connect()) == true)
            #expect(central.statistics.monitorFallbacks == 1)
        }
    }

    @Test("RegisterMonitor twice is AlreadyExists, UnregisterMonitor of an unknown root DoesNotExist (as bluetoothd)")
    func registrationErrors() async throws {
        try await TestBed.with(blesim: Self.air, options: ["--experimental"]) { bed in
            let client = try await bed.connect()
            client.objects.addObjectManager(at: try ObjectPath("/app"))
            func call(_ member: String) async -> String? {
                do {
                    _ = try await client.call(
                        destination: "org.bluez", path: try ObjectPath("/org/bluez/hci0"),
                        interface: "org.bluez.AdvertisementMonitorManager1", member: member,
                        arguments: [.objectPath(try ObjectPath("/app"))])
                    return nil
                } catch let error as DBusError {
                    return error.name.rawValue
                } catch {
                    return "\(error)"
                }
            }
            #expect(await call("UnregisterMonitor") == "org.bluez.Error.DoesNotExist")
            #expect(await call("RegisterMonitor") == nil)
            #expect(await call("RegisterMonitor") == "org.bluez.Error.AlreadyExists")
            #expect(await call("UnregisterMonitor") == nil)
            #expect(await call("UnregisterMonitor") == "org.bluez.Error.DoesNotExist")
        }
    }
}
