import GATT
import SimCore

/// Small builders shared by the SimCore tests.
enum Fixture {
    static let hrs = BluetoothUUID(uuid16: 0x180D)
    static let battery = BluetoothUUID(uuid16: 0x180F)

    static func address(_ last: UInt8) -> DeviceAddress {
        DeviceAddress(validBytes: (0xC0, 0x11, 0x22, 0x33, 0x44, last))
    }

    static func report(
        _ last: UInt8, rssi: Int16 = -60, name: String? = "Dev", uuids: [BluetoothUUID] = [], flags: UInt8? = 0x06,
        txPower: Int8? = nil, manufacturer: [UInt8]? = nil, connectable: Bool = true
    ) -> AdvertisingReport {
        AdvertisingReport(
            address: address(last), addressType: .public, rssi: rssi, connectable: connectable,
            advertisement: Advertisement(
                flags: flags, name: name, serviceUUIDs: uuids,
                manufacturerData: manufacturer.map { [ManufacturerDatum(company: 0x004C, data: $0)] } ?? [],
                txPower: txPower))
    }

    static func adapter(
        temporaryTimeout: Double = 30, rule: ProximityRule = .bluez566, experimental: Bool = false
    )
        -> SimAdapter
    {
        SimAdapter(
            index: 0, spec: .standard(index: 0), temporaryTimeout: temporaryTimeout, proximityRule: rule,
            experimental: experimental)
    }
}

extension Array where Element == AdapterEvent {
    /// The names of the device properties changed by these events, in order.
    var changedDeviceProperties: [String] {
        flatMap { event -> [String] in
            if case .deviceChanged(_, let changed, _) = event { return changed.map(\.name) }
            return []
        }
    }

    var addedDevices: [DeviceAddress] {
        compactMap { if case .deviceAdded(let address, _) = $0 { address } else { nil } }
    }

    var removedDevices: [DeviceAddress] {
        compactMap { if case .deviceRemoved(let address) = $0 { address } else { nil } }
    }

    var adapterChanges: [Property] {
        flatMap { event -> [Property] in
            if case .adapterChanged(let changed) = event { return changed }
            return []
        }
    }
}
