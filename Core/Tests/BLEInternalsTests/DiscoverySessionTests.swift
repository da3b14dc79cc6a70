import GATT
import Testing

@testable import BLE

@Suite struct DiscoverySessionTests {
    let heartRate = BluetoothUUID.heartRate
    let battery = BluetoothUUID.battery

    @Test func theFirstScanStartsDiscoveryAndTheLastStopStopsIt() {
        var session = DiscoverySession()
        let (first, startFirst) = session.add(ScanFilter(services: [heartRate]))
        #expect(startFirst == [.setFilter(DiscoveryFilter(uuids: [heartRate])), .start])
        let (second, startSecond) = session.add(ScanFilter(services: [battery]))
        #expect(startSecond == [.setFilter(DiscoveryFilter(uuids: [heartRate, battery].sorted()))], "no second start")
        #expect(session.remove(first) == [.setFilter(DiscoveryFilter(uuids: [battery]))])
        #expect(session.remove(first).isEmpty, "removing twice does nothing")
        #expect(session.remove(second) == [.stop])
        #expect(!session.isActive)
    }

    @Test func filtersMergeToTheLoosest() {
        let merged = DiscoveryFilter(merging: [
            ScanFilter(services: [heartRate], options: ScanOptions(rssiThreshold: -60, namePattern: "HR")),
            ScanFilter(
                services: nil, options: ScanOptions(allowDuplicates: true, rssiThreshold: -80, namePattern: "HR")),
        ])
        #expect(merged.uuids.isEmpty, "one scanner wants every service")
        #expect(merged.rssi == -80)
        #expect(merged.duplicateData)
        #expect(merged.pattern == "HR")
        let mixed = DiscoveryFilter(merging: [
            ScanFilter(options: ScanOptions(rssiThreshold: -60, namePattern: "A")),
            ScanFilter(options: ScanOptions(namePattern: "B")),
        ])
        #expect(mixed.rssi == nil)
        #expect(mixed.pattern == nil)
    }

    @Test func resumeRestartsARunningScanOnlyAndResendsTheFilter() {
        var idle = DiscoverySession()
        #expect(idle.resume().isEmpty)
        var session = DiscoverySession()
        _ = session.add(ScanFilter(services: [heartRate]))
        #expect(session.resume() == [.setFilter(DiscoveryFilter(uuids: [heartRate])), .start])
    }

    @Test func unchangedFiltersAreNotSentAgain() {
        var session = DiscoverySession()
        let (token, _) = session.add(ScanFilter(services: [heartRate]))
        #expect(session.add(ScanFilter(services: [heartRate])).1.isEmpty)
        #expect(session.update(token, to: ScanFilter(services: [heartRate])).isEmpty)
    }

    @Test func eachScannerFiltersDiscoveriesItself() {
        let filter = ScanFilter(services: [heartRate], options: ScanOptions(rssiThreshold: -70, namePattern: "Pol"))
        let hr = AdvertisementData(localName: "Polar H10", serviceUUIDs: [heartRate])
        #expect(filter.matches(address: "AA:BB:CC:DD:EE:FF", rssi: -60, advertisement: hr))
        #expect(!filter.matches(address: "AA:BB:CC:DD:EE:FF", rssi: -75, advertisement: hr))
        #expect(!filter.matches(address: "AA:BB:CC:DD:EE:FF", rssi: nil, advertisement: hr))
        #expect(!filter.matches(address: "AA:BB", rssi: -60, advertisement: AdvertisementData(localName: "Polar")))
        #expect(
            !filter.matches(
                address: "AA:BB", rssi: -60,
                advertisement: AdvertisementData(localName: "Garmin", serviceUUIDs: [heartRate])))
        #expect(
            ScanFilter(options: ScanOptions(namePattern: "aa:bb")).matches(
                address: "AA:BB:CC:DD:EE:FF", rssi: nil, advertisement: AdvertisementData()))
    }
}

@Suite struct PassiveDiscoverySessionTests {
    @Test("a passive scanner starts no discovery; when it falls back the discovery starts, and its end stops it")
    func passiveScannersNeedNoDiscoveryUntilTheyFallBack() {
        var session = DiscoverySession()
        let (passive, none) = session.add(ScanFilter(options: ScanOptions(allowDuplicates: true)), passive: true)
        #expect(none.isEmpty && !session.isActive && session.hasScanners)
        #expect(
            session.fallBack(passive) == [.setFilter(DiscoveryFilter(duplicateData: true)), .start],
            "the fallback discovers with its filter")
        #expect(session.fallBack(passive).isEmpty, "once")
        #expect(session.remove(passive) == [.stop])
        #expect(!session.hasScanners)
    }

    @Test("passive scanners leave the merged filter and the active scanners' discovery alone")
    func passiveScannersStayOutOfTheMergedFilter() {
        var session = DiscoverySession()
        let (active, start) = session.add(ScanFilter(services: [.battery]))
        #expect(start == [.setFilter(DiscoveryFilter(uuids: [.battery])), .start])
        let (passive, none) = session.add(ScanFilter(), passive: true)
        #expect(none.isEmpty, "an unfiltered passive scanner does not widen the discovery")
        #expect(session.remove(passive).isEmpty)
        #expect(session.remove(active) == [.stop])
    }
}
