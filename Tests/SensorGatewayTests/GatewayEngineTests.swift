import BLE
import BTHomeCrypto
import GATT
import SensorGateway
import Testing

/// The engine: de-duplication, replay and downgrade refusal, state per
/// device, eviction and expiry, the rate limits of updates, the counters.
@Suite struct GatewayEngineTests {
    static let sensor = DeviceAddress("54:48:E6:8F:80:A5")!
    static let key = BTHomeBindKey(hex: "231d39c1d7cc1ab1aee224cd096db932")!

    static func bthome(_ hex: String, name: String? = nil) -> AdvertisementData {
        AdvertisementData(localName: name, serviceData: [.bthome: bytes(hex)])
    }

    static func report(
        _ advertisement: AdvertisementData, from address: DeviceAddress = sensor, rssi: Int? = -60
    )
        -> GatewayReport
    {
        GatewayReport(address: address, rssi: rssi, advertisement: advertisement)
    }

    static func config(_ change: (inout GatewayConfig) -> Void = { _ in }) -> GatewayConfig {
        var config = GatewayConfig()
        change(&config)
        return config
    }

    @Test func keepsTheLatestReadingsAndCounters() throws {
        var engine = GatewayEngine(config: Self.config())
        let first = engine.ingest(Self.report(Self.bthome("40 00 01 02 ca 09", name: "ATC_1")), at: .seconds(1))
        #expect(first?.readings.map(\.reading.name) == ["temperature"])
        _ = engine.ingest(Self.report(Self.bthome("40 00 02 02 cf 09 03 bf 13"), rssi: -70), at: .seconds(2))
        let entry = try #require(engine.table.entry(Self.sensor))
        #expect(entry.name == "ATC_1")
        #expect(entry.kind == .bthome)
        #expect(entry.readings[ReadingKey(kind: .sensor, name: "temperature")]?.reading.value == .number(25.11))
        #expect(entry.readings[ReadingKey(kind: .sensor, name: "humidity")]?.at == .seconds(2))
        #expect(entry.firstSeen == .seconds(1) && entry.lastSeen == .seconds(2))
        #expect(entry.reports == 2 && entry.decoded == 2)
        #expect(entry.lastRSSI == -70)
        #expect(abs(entry.rssi! - (-63)) < 1e-9)  // 0.3 of the way from -60 to -70
        #expect(engine.stats.decoded == 2 && engine.stats.reportsIn == 2)
    }

    @Test func dropsRepeatedPacketIDsWithinFourSeconds() {
        var engine = GatewayEngine(config: Self.config())
        let packet = Self.bthome("40 00 09 01 5d")
        _ = engine.ingest(Self.report(packet), at: .seconds(10))
        _ = engine.ingest(Self.report(packet), at: .seconds(11))  // the same advertisement again
        _ = engine.ingest(Self.report(Self.bthome("40 00 08 01 5d")), at: .seconds(12))  // older
        #expect(engine.stats.duplicatesDropped == 2)
        _ = engine.ingest(Self.report(Self.bthome("40 00 0a 01 5d")), at: .seconds(12))  // next
        _ = engine.ingest(Self.report(Self.bthome("40 00 49 01 5d")), at: .seconds(13))  // 63 ahead: new
        _ = engine.ingest(Self.report(Self.bthome("40 00 89 01 5d")), at: .seconds(14))  // 64 ahead: a repeat
        #expect(engine.stats.duplicatesDropped == 3)
        _ = engine.ingest(Self.report(Self.bthome("40 00 49 01 5d")), at: .seconds(18.5))  // 4.5 s later: new
        #expect(engine.stats.decoded == 4)
        #expect(engine.table.entry(Self.sensor)?.duplicates == 3)
    }

    @Test func encryptedCountersMustMoveForward() throws {
        var engine = GatewayEngine(config: Self.config(), keys: [Self.sensor: Self.key])
        var counter: UInt32 = 1000
        func sealed(_ counter: UInt32) throws -> AdvertisementData {
            AdvertisementData(serviceData: [
                .bthome: try BTHomeEncryption.seal(
                    objects: bytes("02 ca 09"), deviceInfo: 0x40, mac: Self.sensor.bytes, counter: counter,
                    key: Self.key)
            ])
        }
        let first = try sealed(counter)
        _ = engine.ingest(Self.report(first), at: .seconds(1))
        _ = engine.ingest(Self.report(first), at: .seconds(2))  // heard again: a duplicate, not decrypted
        _ = engine.ingest(Self.report(try sealed(999)), at: .seconds(3))  // back: a replay
        counter += 1
        _ = engine.ingest(Self.report(try sealed(counter)), at: .seconds(4))
        _ = engine.ingest(Self.report(try sealed(5)), at: .seconds(5))  // a restarted device (below 100)
        #expect(engine.stats.decoded == 3)
        #expect(engine.stats.duplicatesDropped == 1)
        #expect(engine.stats.decodeErrors == ["bthome.counter-replayed": 1])
        let entry = try #require(engine.table.entry(Self.sensor))
        #expect(entry.encrypted)
        #expect(entry.lastError?.failure == .bthomeCounterReplayed)
    }

    @Test func refusesPlainDataFromAKeyedDeviceAndCountsFailures() throws {
        var engine = GatewayEngine(config: Self.config(), keys: [Self.sensor: Self.key])
        _ = engine.ingest(Self.report(Self.bthome("40 02 ca 09")), at: .seconds(1))
        _ = engine.ingest(
            Self.report(Self.bthome("41 a4 72 66 c9 5f 73 00 11 22 33 78 23 72 14"), from: DeviceAddress(value: 1)),
            at: .seconds(1))
        _ = engine.ingest(Self.report(Self.bthome("20"), from: DeviceAddress(value: 2)), at: .seconds(1))
        _ = engine.ingest(Self.report(Self.bthome("40 02 ca 09 fe 01"), from: DeviceAddress(value: 3)), at: .seconds(1))
        #expect(
            engine.stats.decodeErrors == [
                "bthome.downgrade": 1, "bthome.no-key": 1, "bthome.version": 1, "bthome.unknown-object": 1,
            ])
        #expect(engine.stats.decoded == 1)  // the partial one: its temperature is kept
        #expect(engine.table.entry(DeviceAddress(value: 3))?.readings.count == 1)
        #expect(engine.table.entry(Self.sensor)?.readings.isEmpty == true)
    }

    @Test func decodesBeaconsAndTheAggregator() throws {
        var engine = GatewayEngine(config: Self.config())
        let beacon = AdvertisementData(manufacturerData: [
            0x004C: bytes("02 15 e2 c5 6d b5 df fb 48 d2 b0 60 d0 f5 a7 10 96 e0 00 01 00 02 c5")
        ])
        let eddystone = AdvertisementData(serviceData: [
            BluetoothUUID(uuid16: 0xFEAA): bytes("20 00 0b b8 17 80 00 00 03 e8 00 00 0e 10")
        ])
        let aggregator = AdvertisementData(
            localName: "gw-1", serviceUUIDs: [.environmentalSensing],
            serviceData: [.bthome: bytes("40 01 57 02 0a 09 03 39 12 04 c5 8b 01")])
        _ = engine.ingest(Self.report(beacon, from: DeviceAddress(value: 1)), at: .seconds(1))
        _ = engine.ingest(Self.report(eddystone, from: DeviceAddress(value: 2)), at: .seconds(1))
        _ = engine.ingest(Self.report(aggregator, from: DeviceAddress(value: 3)), at: .seconds(1))
        #expect(engine.table.entry(DeviceAddress(value: 1))?.kind == .ibeacon)
        #expect(engine.table.entry(DeviceAddress(value: 2))?.kind == .eddystone)
        let gw = try #require(engine.table.entry(DeviceAddress(value: 3)))
        #expect(gw.kind == .aggregator)
        #expect(gw.readings[ReadingKey(kind: .sensor, name: "pressure")]?.reading.value == .number(1013.17))
    }

    @Test func ignoresUnknownFormatsUnlessAskedAndAppliesAllowAndDenyLists() {
        let phone = AdvertisementData(localName: "Phone", manufacturerData: [0x0006: [1, 2, 3]])
        var engine = GatewayEngine(config: Self.config())
        _ = engine.ingest(Self.report(phone, from: DeviceAddress(value: 9)), at: .seconds(1))
        #expect(engine.table.count == 0 && engine.stats.unknownFormat == 1)
        engine = GatewayEngine(config: Self.config { $0.trackUnknown = true })
        _ = engine.ingest(Self.report(phone, from: DeviceAddress(value: 9)), at: .seconds(1))
        #expect(engine.table.entry(DeviceAddress(value: 9))?.kind == .unknown)

        engine = GatewayEngine(
            config: Self.config {
                $0.allow = DeviceFilter(namePrefixes: ["ATC_"], companyIDs: [0x004C])
                $0.deny = DeviceFilter(addresses: [DeviceAddress(value: 2)])
            })
        _ = engine.ingest(
            Self.report(Self.bthome("40 01 5d", name: "ATC_1"), from: DeviceAddress(value: 1)), at: .seconds(1))
        _ = engine.ingest(
            Self.report(Self.bthome("40 01 5d", name: "ATC_2"), from: DeviceAddress(value: 2)), at: .seconds(1))
        _ = engine.ingest(
            Self.report(Self.bthome("40 01 5d", name: "other"), from: DeviceAddress(value: 3)), at: .seconds(1))
        #expect(engine.table.entries.map(\.address) == [DeviceAddress(value: 1)])
        #expect(engine.stats.filtered == 2)
    }

    @Test func evictsTheLeastRecentlyHeardAndExpiresTheUnheard() {
        var engine = GatewayEngine(
            config: Self.config {
                $0.maxDevices = 3
                $0.expirySeconds = 60
                $0.eventIntervalSeconds = 0
            })
        for index in 1...3 {
            _ = engine.ingest(
                Self.report(Self.bthome("40 01 5d"), from: DeviceAddress(value: UInt64(index))), at: .seconds(index))
        }
        // Device 1 heard again: device 2 is now the least recent, and goes for device 4.
        _ = engine.ingest(Self.report(Self.bthome("40 01 5e"), from: DeviceAddress(value: 1)), at: .seconds(4))
        _ = engine.ingest(Self.report(Self.bthome("40 01 5d"), from: DeviceAddress(value: 4)), at: .seconds(5))
        #expect(engine.table.entries.map(\.address.value) == [4, 1, 3])
        #expect(engine.stats.devicesEvicted == 1)
        #expect(engine.nextDeadline == .seconds(63))  // device 3, heard at 3 s
        _ = engine.tick(at: .seconds(63.5))
        #expect(engine.table.entries.map(\.address.value) == [4, 1])
        #expect(engine.stats.devicesExpired == 1)
        _ = engine.tick(at: .seconds(100))
        #expect(engine.table.count == 0 && engine.stats.devicesExpired == 3)
    }

    @Test func rateLimitsUpdatesPerDeviceAndCoalescesChanges() {
        var engine = GatewayEngine(config: Self.config { $0.eventIntervalSeconds = 10 })
        #expect(engine.ingest(Self.report(Self.bthome("40 00 01 02 ca 09")), at: .seconds(0)) != nil)
        // Within the interval: nothing now, one update later with the newest values of everything that changed.
        #expect(engine.ingest(Self.report(Self.bthome("40 00 02 02 cb 09")), at: .seconds(1)) == nil)
        #expect(engine.ingest(Self.report(Self.bthome("40 00 03 02 cc 09 03 bf 13")), at: .seconds(2)) == nil)
        #expect(engine.ingest(Self.report(Self.bthome("40 00 04 02 cc 09 03 bf 13")), at: .seconds(3)) == nil)
        #expect(engine.tick(at: .seconds(9.9)).isEmpty)
        #expect(engine.nextDeadline == .seconds(10))
        let later = engine.tick(at: .seconds(10))
        #expect(later.count == 1)
        #expect(later.first?.readings.map(\.reading.name) == ["humidity", "temperature"])
        #expect(later.first?.readings.last?.reading.value == .number(25.08))
        // Unchanged values make no update.
        #expect(engine.ingest(Self.report(Self.bthome("40 00 05 02 cc 09 03 bf 13")), at: .seconds(25)) == nil)
        #expect(engine.stats.updatesPublished == 2)
        #expect(engine.stats.updatesCoalesced == 2)
    }

    @Test func capsUpdatesPerSecondOverAllDevices() {
        var engine = GatewayEngine(config: Self.config { $0.eventsPerSecond = 2 })
        var now: [ReadingUpdate] = []
        for index in 1...5 {
            if let update = engine.ingest(
                Self.report(Self.bthome("40 01 5d"), from: DeviceAddress(value: UInt64(index))), at: .zero)
            {
                now.append(update)
            }
        }
        #expect(now.count == 2)
        #expect(engine.tick(at: .milliseconds(500)).count == 1)
        #expect(engine.tick(at: .seconds(2)).count == 2)
        #expect(engine.stats.updatesPublished == 5)
    }

    @Test func noEventsWithAZeroInterval() {
        var engine = GatewayEngine(config: Self.config { $0.eventIntervalSeconds = 0 })
        #expect(engine.ingest(Self.report(Self.bthome("40 01 5d")), at: .zero) == nil)
        #expect(engine.tick(at: .seconds(100)).isEmpty)
    }

    @Test func boundsReadingsPerDeviceAndCountsCoalescedReports() {
        var engine = GatewayEngine(config: Self.config { $0.maxReadingsPerDevice = 2 })
        _ = engine.ingest(
            GatewayReport(
                address: Self.sensor, rssi: 127, advertisement: Self.bthome("40 01 5d 02 ca 09 03 bf 13"),
                reportCount: 5),
            at: .zero)
        let entry = engine.table.entry(Self.sensor)
        #expect(entry?.readings.count == 2)
        #expect(entry?.rssi == nil)  // 127: not available
        #expect(engine.stats.readingsDropped == 1)
        #expect(engine.stats.reportsIn == 5 && engine.stats.discoveries == 1 && entry?.reports == 5)
    }

    @Test func waitingUpdatesGoOutInDueOrderOncePerDevice() {
        var engine = GatewayEngine(config: Self.config { $0.eventIntervalSeconds = 10 })
        // Each device's first update at a different time, then a change one second later: due 10 s after the first.
        for index in 0..<50 {
            let address = DeviceAddress(value: UInt64(index))
            let first = Duration.milliseconds(Int64((index * 37) % 50) * 100)
            #expect(engine.ingest(Self.report(Self.bthome("40 01 01"), from: address), at: first) != nil)
            #expect(engine.ingest(Self.report(Self.bthome("40 01 02"), from: address), at: first + .seconds(1)) == nil)
        }
        var seen: [DeviceAddress: Duration] = [:]
        var now = Duration.seconds(6)
        while now < .seconds(20) {
            for update in engine.tick(at: now) {
                #expect(seen.updateValue(now, forKey: update.address) == nil, "one update per device")
                #expect(update.readings.map(\.reading.value) == [.number(2)])
            }
            now += .milliseconds(50)
        }
        #expect(seen.count == 50)
        for (address, at) in seen {
            let due = Duration.milliseconds(Int64((Int(address.value) * 37) % 50) * 100) + .seconds(10)
            #expect(at >= due && at < due + .milliseconds(100), "\(address) due \(due), sent \(at)")
        }
    }

    @Test func aDeviceEvictedWhileWaitingSendsNothingAndTheWaitingListStaysBounded() {
        var engine = GatewayEngine(
            config: Self.config {
                $0.maxDevices = 2
                $0.eventIntervalSeconds = 10
            })
        for round in 0..<100 {
            // Two devices heard, changed, then pushed out by the next round's.
            for slot in 0..<2 {
                let address = DeviceAddress(value: UInt64(round * 2 + slot))
                _ = engine.ingest(Self.report(Self.bthome("40 01 01"), from: address), at: .seconds(round))
                _ = engine.ingest(Self.report(Self.bthome("40 01 02"), from: address), at: .seconds(round))
            }
        }
        #expect(engine.stats.devicesEvicted == 198)
        let sent = engine.tick(at: .seconds(200))
        #expect(Set(sent.map(\.address.value)) == [198, 199], "only the devices still held")
    }
}
