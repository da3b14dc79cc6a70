/// How a received advertisement updates a device object, as bluetoothd 5.66 does it
/// (`btd_adapter_update_found_device` and the `device_set_*` functions).
extension RemoteDevice {
    /// BlueZ reports an RSSI change during an unfiltered discovery only when it moved by at
    /// least this many dBm (RSSI_THRESHOLD); a filtered discovery reports every change.
    public static let unfilteredRSSIDelta: Int16 = 8

    /// Applies `report`; returns the properties that changed (with their new values), in the
    /// order bluetoothd updates them. `duplicateData` replaces manufacturer and service data
    /// instead of merging them, so they change (and are reported) with every advertisement.
    public mutating func apply(
        _ report: AdvertisingReport, rssiDelta: Int16, duplicateData: Bool
    ) -> [String] {
        var changed: [String] = []
        connectable = report.connectable
        let ad = report.advertisement
        if updateRSSI(report.rssi, delta: rssiDelta) { changed.append("RSSI") }
        if let tx = ad.txPower, txPower != Int16(tx) {
            txPower = Int16(tx)
            changed.append("TxPower")
        }
        if let value = ad.appearance, value != 0, appearance != value {
            appearance = value
            changed.append("Appearance")
        }
        if let newName = ad.name, ad.nameIsComplete || name == nil, newName != name {
            name = newName
            changed.append("Name")
            if alias == nil { changed.append("Alias") }
        }
        let added = ad.serviceUUIDs.filter { !uuids.contains($0) }
        if !added.isEmpty && !servicesResolved {
            uuids += added
            changed.append("UUIDs")
        }
        if mergeManufacturerData(ad.manufacturerData, replacing: duplicateData) { changed.append("ManufacturerData") }
        if mergeServiceData(ad.serviceData, replacing: duplicateData) { changed.append("ServiceData") }
        if let flags = ad.flags, flags != advertisingFlags {
            advertisingFlags = flags
            changed.append("AdvertisingFlags")
        }
        return changed
    }

    /// bluetoothd's `device_set_rssi_with_delta`: a first RSSI is always reported; later ones
    /// when they moved by `delta` or more, so with delta 0 (a filtered discovery) every
    /// report's RSSI is reported, even when unchanged.
    private mutating func updateRSSI(_ value: Int16, delta: Int16) -> Bool {
        if let current = rssi, abs(Int(current) - Int(value)) < Int(delta) { return false }
        rssi = value
        return true
    }

    private mutating func mergeManufacturerData(_ data: [ManufacturerDatum], replacing: Bool) -> Bool {
        if replacing { manufacturerData = [] }
        var changed = replacing && !data.isEmpty
        for datum in data {
            if let index = manufacturerData.firstIndex(where: { $0.company == datum.company }) {
                if manufacturerData[index].data != datum.data {
                    manufacturerData[index].data = datum.data
                    changed = true
                }
            } else {
                manufacturerData.append(datum)
                changed = true
            }
        }
        return changed
    }

    private mutating func mergeServiceData(_ data: [ServiceDatum], replacing: Bool) -> Bool {
        if replacing { serviceData = [] }
        var changed = replacing && !data.isEmpty
        for datum in data {
            if let index = serviceData.firstIndex(where: { $0.uuid == datum.uuid }) {
                if serviceData[index].data != datum.data {
                    serviceData[index].data = datum.data
                    changed = true
                }
            } else {
                serviceData.append(datum)
                changed = true
            }
        }
        return changed
    }

    /// The current values of `names`, skipping absent ones.
    public func values(of names: [String], adapterPath: String, experimental: Bool = false) -> [Property] {
        let all = properties(adapterPath: adapterPath, experimental: experimental)
        return names.compactMap { name in all.first { $0.name == name } }
    }
}
