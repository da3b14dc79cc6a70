import RoleKit

/// The relayed devices (``FleetDevice``) and what of theirs waits for the
/// broker: Home Assistant discovery configs not yet published, availability
/// changes, and each reading's newest value (a newer value replaces one not
/// yet sent, counted as merged).
///
/// Memory is bounded by the number of devices, never by time: at most
/// ``maxDevices`` devices (readings of further devices are dropped and
/// counted until one departs) with at most ``maxReadingsPerDevice`` readings
/// each (further readings are dropped and counted). A device that departs is
/// forgotten once its `offline` is handed out. Devices with work wait in one
/// FIFO, each at most once, and are served one message at a time.
struct DeviceFeed: Sendable {
    static let maxDevices = 4096
    static let maxReadingsPerDevice = 64

    /// One message to publish.
    enum Item: Sendable, Hashable {
        /// A reading's discovery config (Home Assistant).
        case announce(FleetDevice, FleetDeviceReading)
        /// The device's availability.
        case availability(device: String, online: Bool)
        /// A reading's value.
        case reading(device: String, FleetDeviceReading)
    }

    private struct Slot: Sendable {
        var reading: FleetDeviceReading
        var announced: FleetDeviceReading.Announcement?
        /// The state last handed out (nil: none since the connection was made).
        var sent: FleetDeviceReading.Value?
        var valueWaiting = false
    }

    private struct Entry: Sendable {
        var device: FleetDevice
        var slots: [String: Slot] = [:]
        var announcements: [String] = []
        var values: [String] = []
        var online = true
        var availabilityWaiting = true
        var queued = false

        /// The next message of this device, taken; nil when nothing waits.
        mutating func takeNext() -> Item? {
            while !announcements.isEmpty {
                let id = announcements.removeFirst()
                guard let reading = slots[id]?.reading else { continue }
                slots[id]?.announced = reading.announcement
                return .announce(device, reading)
            }
            if availabilityWaiting && online {
                availabilityWaiting = false
                return .availability(device: device.id, online: true)
            }
            while !values.isEmpty {
                let id = values.removeFirst()
                guard let reading = slots[id]?.reading else { continue }
                slots[id]?.valueWaiting = false
                if reading.isState { slots[id]?.sent = reading.value }
                return .reading(device: device.id, reading)
            }
            if availabilityWaiting {
                availabilityWaiting = false
                return .availability(device: device.id, online: false)
            }
            return nil
        }

        mutating func announce(_ id: String) {
            if !announcements.contains(id) { announcements.append(id) }
        }

        /// Takes an update; returns the values merged and readings dropped.
        mutating func take(
            _ device: FleetDevice, _ readings: [FleetDeviceReading], announces: Bool
        ) -> (merged: Int64, dropped: Int64) {
            if !online {
                online = true
                availabilityWaiting = true
            }
            if device != self.device {
                self.device = device
                if announces { for id in slots.keys.sorted() { announce(id) } }
            }
            var merged: Int64 = 0
            var dropped: Int64 = 0
            for reading in readings {
                let id = reading.id
                guard id != "availability", FleetDevice.isTopicLevel(id) else {
                    dropped += 1
                    continue
                }
                if slots[id] == nil {
                    guard slots.count < DeviceFeed.maxReadingsPerDevice else {
                        dropped += 1
                        continue
                    }
                    slots[id] = Slot(reading: reading)
                }
                slots[id]!.reading = reading
                if slots[id]!.valueWaiting {
                    merged += 1
                } else if reading.isState && slots[id]!.sent == reading.value {
                    // The broker already keeps this state.
                } else {
                    slots[id]!.valueWaiting = true
                    values.append(id)
                }
                if announces && slots[id]!.announced != reading.announcement { announce(id) }
            }
            return (merged, dropped)
        }

        /// Everything waits again: configs, availability, the states' values.
        mutating func restate(announces: Bool) {
            announcements = []
            values = []
            for id in slots.keys.sorted() {
                slots[id]!.announced = nil
                slots[id]!.sent = nil
                if announces { announcements.append(id) }
                slots[id]!.valueWaiting = slots[id]!.valueWaiting || slots[id]!.reading.isState
                if slots[id]!.valueWaiting { values.append(id) }
            }
            availabilityWaiting = true
        }
    }

    /// Whether discovery configs are made (Home Assistant enabled).
    let announces: Bool
    private var entries: [String: Entry] = [:]
    private var queue = IndexQueue<String>()

    /// Values replaced by a newer one before they were sent.
    private(set) var merged: Int64 = 0
    /// Updates of devices refused because ``maxDevices`` were tracked, or whose id is not a topic level.
    private(set) var devicesDropped: Int64 = 0
    /// Readings refused because their device had ``maxReadingsPerDevice``, or whose id is not a topic level.
    private(set) var readingsDropped: Int64 = 0
    /// Devices that departed (their `offline` handed out).
    private(set) var departed: Int64 = 0

    init(announces: Bool) { self.announces = announces }

    /// The same devices for a feed of another fleet section (counters start
    /// again); everything waits again once its connection is made.
    func carried(announces: Bool) -> DeviceFeed {
        var feed = DeviceFeed(announces: announces)
        feed.entries = entries
        return feed
    }

    /// Devices tracked.
    var count: Int { entries.count }
    /// Devices with something waiting.
    var waiting: Int { queue.count }

    /// Takes `readings` of `device`: the device is available, each reading's
    /// value waits (replacing one not yet sent) unless it is the state last
    /// handed out (a plugin may give every reading each time), and a reading whose
    /// announcement is new or changed (or the device's own details) waits
    /// for its discovery config.
    mutating func update(_ device: FleetDevice, _ readings: [FleetDeviceReading]) {
        guard FleetDevice.isTopicLevel(device.id) else {
            devicesDropped += 1
            return
        }
        if entries[device.id] == nil {
            guard entries.count < Self.maxDevices else {
                devicesDropped += 1
                return
            }
            entries[device.id] = Entry(device: device)
        }
        let announces = self.announces
        let (merged, dropped) = entries[device.id]!.take(device, readings, announces: announces)
        self.merged += merged
        readingsDropped += dropped
        enqueue(device.id)
    }

    /// The device `id` departed: its `offline` waits (after any value still
    /// waiting), and then it is forgotten.
    mutating func unavailable(_ id: String) {
        guard entries[id] != nil else { return }
        entries[id]!.online = false
        entries[id]!.availabilityWaiting = true
        enqueue(id)
    }

    /// A new connection: the broker may have lost everything (a restart
    /// without persistence), so every device's configs, availability and
    /// latest states wait again (events are not repeated).
    mutating func reconnected() {
        queue.removeAll()
        for id in entries.keys.sorted() {
            entries[id]!.restate(announces: announces)
            entries[id]!.queued = false
            enqueue(id)
        }
    }

    /// The next message, taken: the oldest waiting device's configs first,
    /// then its availability and values.
    mutating func pop() -> Item? {
        while let id = queue.first {
            if let item = entries[id]?.takeNext() { return item }
            _ = queue.pop()
            if let entry = entries[id] {
                if entry.online {
                    entries[id]!.queued = false
                } else {
                    entries[id] = nil
                    departed += 1
                }
            }
        }
        return nil
    }

    private mutating func enqueue(_ id: String) {
        guard entries[id]?.queued == false else { return }
        entries[id]!.queued = true
        queue.push(id)
    }
}
