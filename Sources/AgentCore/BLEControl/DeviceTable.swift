import BLE
import GATT

/// The control API's table of discovered devices (`central.devices`),
/// bounded: a row not refreshed by a discovery within ``expiry`` goes unless
/// the central manager still holds its device (bluetoothd keeps a device it
/// hears unchanged without signalling it, so a scan without duplicates
/// discovers it once; the manager drops it when bluetoothd removes it);
/// beyond ``capacity`` rows the least recently heard goes. Each costs O(1)
/// per discovery (a ``RecencyList``), nothing scans the table; a row kept
/// is renewed for another ``expiry``, so it is looked at once per expiry.
struct DeviceTable: Sendable {
    struct Row: Sendable, Hashable {
        var name: String?
        var rssi: Int?
        var services: [BluetoothUUID]
    }

    /// What the table dropped so far.
    struct Counters: Sendable, Hashable {
        var expired = 0
        var evicted = 0
    }

    let capacity: Int
    let expiry: Duration
    private var rows: [PeripheralIdentifier: Row] = [:]
    private var recency = RecencyList<PeripheralIdentifier>()
    private(set) var counters = Counters()

    init(capacity: Int = 16_384, expiry: Duration = .seconds(30)) {
        self.capacity = max(1, capacity)
        self.expiry = expiry
    }

    var count: Int { rows.count }

    /// Records a discovery heard at `now`.
    mutating func record(_ id: PeripheralIdentifier, _ row: Row, now: BLEInstant) {
        rows[id] = row
        recency.touch(id, at: now)
        while recency.count > capacity, let oldest = recency.removeOldest() {
            rows[oldest] = nil
            counters.evicted += 1
        }
    }

    /// The rows not heard from within ``expiry`` at `now`, oldest first.
    func due(now: BLEInstant) -> [PeripheralIdentifier] {
        recency.keys(untouchedFor: expiry, at: now)
    }

    /// Drops the rows not heard from within ``expiry`` at `now`; rows of
    /// devices in `held` stay, renewed as if heard now.
    mutating func expire(now: BLEInstant, keeping held: Set<PeripheralIdentifier>) {
        var budget = recency.count
        while budget > 0, let (id, heard) = recency.oldest, now - heard >= expiry {
            budget -= 1
            if held.contains(id) {
                recency.touch(id, at: now)
                continue
            }
            recency.remove(id)
            rows[id] = nil
            counters.expired += 1
        }
    }

    /// The rows, strongest RSSI first (then by identifier).
    var sorted: [(id: PeripheralIdentifier, row: Row)] {
        rows.map { ($0.key, $0.value) }.sorted { ($0.row.rssi ?? -999, $1.id) > ($1.row.rssi ?? -999, $0.id) }
    }
}
