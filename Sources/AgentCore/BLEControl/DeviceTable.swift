import BLE
import GATT

/// The control API's table of discovered devices (`central.devices`),
/// bounded: a row not refreshed by a discovery within ``expiry`` goes unless
/// the central manager still holds its device (bluetoothd keeps a device it
/// hears unchanged without signalling it, so a scan without duplicates
/// discovers it once; the manager drops it when bluetoothd removes it);
/// beyond ``capacity`` rows the least recently heard goes. Each costs O(1)
/// per discovery (the rows live in a ``RecencyTable``), nothing scans the
/// table; a row kept is renewed for another ``expiry``, so it is looked at
/// once per expiry.
struct DeviceTable: Sendable {
    /// What `central.devices` lists of a device: what its last discovery said.
    struct Row: Sendable, Hashable {
        var name: String?
        /// dBm; nil when unknown (HCI's "not available" too, so such a device sorts last, not first).
        var rssi: Int?
    }

    /// What the table dropped so far.
    struct Counters: Sendable, Hashable {
        var expired = 0
        var evicted = 0
    }

    let capacity: Int
    let expiry: Duration
    private var rows = RecencyTable<PeripheralIdentifier, Row>()
    private(set) var counters = Counters()

    init(capacity: Int = 16_384, expiry: Duration = .seconds(30)) {
        self.capacity = max(1, capacity)
        self.expiry = expiry
    }

    var count: Int { rows.count }

    /// Records a discovery heard at `now`.
    mutating func record(_ id: PeripheralIdentifier, _ row: Row, now: BLEInstant) {
        rows.touch(id, row, at: now)
        while rows.count > capacity, rows.removeOldest() != nil {
            counters.evicted += 1
        }
    }

    /// The rows not heard from within ``expiry`` at `now`, oldest first.
    func due(now: BLEInstant) -> [PeripheralIdentifier] {
        rows.keys(untouchedFor: expiry, at: now)
    }

    /// Drops the rows not heard from within ``expiry`` at `now`; rows of
    /// devices in `held` stay, renewed as if heard now.
    mutating func expire(now: BLEInstant, keeping held: Set<PeripheralIdentifier>) {
        var budget = rows.count
        while budget > 0, let (id, heard) = rows.oldest, now - heard >= expiry {
            budget -= 1
            if held.contains(id) {
                rows.renew(id, at: now)
                continue
            }
            rows.remove(id)
            counters.expired += 1
        }
    }

    /// The rows by device, strongest RSSI first (then by identifier).
    var sorted: [(key: PeripheralIdentifier, value: Row)] {
        var sorted = rows.entries
        sorted.sort { ($0.value.rssi ?? -999, $1.key) > ($1.value.rssi ?? -999, $0.key) }
        return sorted
    }
}

extension DeviceTable.Row {
    /// What `found` says: its name and its measured RSSI.
    init(_ found: Discovery) {
        self.init(name: found.name, rssi: found.measuredRSSI)
    }
}
