/// The physical limits of a BLE connection (off by default): how many notifications or write
/// commands per second a link with this connection interval, PHY and data length can carry.
///
/// The arithmetic (Core Specification Vol 6 Part B 2.1 and 4.5): each ATT PDU (3 bytes of
/// header and the value, at most MTU - 3 of it) gets a 4-byte L2CAP header and is cut into LL
/// data PDUs of at most `dataLength` octets. Each LL PDU is an exchange on the air: the PDU,
/// T_IFS (150 µs), the peer's empty PDU, T_IFS. A connection event carries at most
/// `maxPacketsPerEvent` PDUs and no more than fits in the interval.
public struct LinkModel: Sendable, Equatable {
    /// The LE PHY.
    public enum PHY: String, Sendable, Equatable, CaseIterable {
        /// LE 1M: 1 Mb/s, 1-byte preamble.
        case le1M = "1M"
        /// LE 2M: 2 Mb/s, 2-byte preamble.
        case le2M = "2M"
        /// LE Coded with S=8: 125 kb/s.
        case coded = "coded"
    }

    /// The connection interval, milliseconds (7.5...4000 in steps the spec does not bind us to).
    public var connectionIntervalMs: Double
    /// The PHY.
    public var phy: PHY
    /// The most LL data PDUs one connection event carries (a controller's limit).
    public var maxPacketsPerEvent: Int
    /// The LL data length: octets of payload per LL PDU (27 without Data Length Extension, up to 251).
    public var dataLength: Int

    /// T_IFS, the gap between two packets of an exchange, microseconds.
    public static let interFrameSpace = 150.0

    /// A link model; the defaults are a phone-like link: 30 ms, LE 1M, 6 packets per event, 251 octets.
    public init(connectionIntervalMs: Double = 30, phy: PHY = .le1M, maxPacketsPerEvent: Int = 6, dataLength: Int = 251)
    {
        self.connectionIntervalMs = connectionIntervalMs
        self.phy = phy
        self.maxPacketsPerEvent = maxPacketsPerEvent
        self.dataLength = dataLength
    }

    /// Microseconds an LL data PDU with `payload` octets is on the air: preamble, access address,
    /// 2-byte header, payload, 3-byte CRC (LE Coded: its FEC blocks at S=8).
    public func airMicroseconds(payload: Int) -> Double {
        switch phy {
        case .le1M:
            let octets: Int = 10 + payload  // preamble 1, access address 4, header 2, CRC 3
            return Double(octets * 8)
        case .le2M:
            let octets: Int = 11 + payload  // preamble 2, access address 4, header 2, CRC 3
            return Double(octets * 8) / 2
        case .coded:
            // 80 µs preamble; FEC block 1 (access address 32 bits, CI 2, TERM1 3) at 8 µs/bit;
            // FEC block 2 (header, payload, CRC, TERM2 3 bits) at 8 µs/bit.
            let preamble = 80.0
            let block1 = Double(32 + 2 + 3) * 8
            let block2Bits = (2 + payload + 3) * 8 + 3
            return preamble + block1 + Double(block2Bits) * 8
        }
    }

    /// One exchange carrying `payload` octets: the PDU, T_IFS, the peer's empty PDU, T_IFS.
    public func exchangeMicroseconds(payload: Int) -> Double {
        airMicroseconds(payload: payload) + Self.interFrameSpace + airMicroseconds(payload: 0) + Self.interFrameSpace
    }

    /// The LL PDU payload sizes one ATT PDU of `attBytes` octets is cut into (with its L2CAP header).
    public func fragments(attBytes: Int) -> [Int] {
        var left = attBytes + 4
        var sizes: [Int] = []
        let size = max(dataLength, 1)
        while left > 0 {
            sizes.append(min(left, size))
            left -= size
        }
        return sizes
    }

    /// The ATT PDU of a notification or write command of `valueLength` bytes on a link with
    /// `mtu` (the value is cut to MTU - 3, as the ATT server sends it).
    public static func attBytes(valueLength: Int, mtu: UInt16) -> Int { 3 + min(valueLength, Int(mtu) - 3) }

    /// The most notifications (or write commands) of `valueLength` bytes per second the link
    /// carries: the lower of the packet limit (PDUs per event times events per second) and the
    /// air-time limit (the interval filled with exchanges).
    public func maxPerSecond(valueLength: Int, mtu: UInt16) -> Double {
        let pieces = fragments(attBytes: Self.attBytes(valueLength: valueLength, mtu: mtu))
        let eventsPerSecond = 1000 / connectionIntervalMs
        let byPackets = Double(maxPacketsPerEvent) * eventsPerSecond / Double(pieces.count)
        let airPerValue = pieces.map { exchangeMicroseconds(payload: $0) }.reduce(0, +)
        let byAir = 1_000_000 / airPerValue
        return min(byPackets, byAir)
    }

    /// How many values a link may send at once before the rate applies: one connection event's worth (at least 1).
    public func burst(valueLength: Int, mtu: UInt16) -> Double {
        max(1, maxPerSecond(valueLength: valueLength, mtu: mtu) * connectionIntervalMs / 1000)
    }
}

/// A link's budget under a `LinkModel`: a token bucket refilled at the model's rate, one
/// connection event deep. A value sent without a token is not sent (the device's queue is full).
public struct LinkBudget: Sendable, Equatable {
    /// Values that may go now.
    public private(set) var tokens: Double
    /// When the tokens were last counted.
    public private(set) var last: SimInstant

    /// A full budget at `start`.
    public init(tokens: Double, at start: SimInstant) {
        self.tokens = tokens
        last = start
    }

    /// Whether a value of `valueLength` bytes may go at `now` under `model` on a link with
    /// `mtu`; takes its token when it may.
    public mutating func take(_ model: LinkModel, valueLength: Int, mtu: UInt16, at now: SimInstant) -> Bool {
        let rate = model.maxPerSecond(valueLength: valueLength, mtu: mtu)
        let burst = model.burst(valueLength: valueLength, mtu: mtu)
        if now > last {
            tokens = min(burst, tokens + rate * (now.seconds - last.seconds))
            last = now
        }
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}

/// Write commands on a link under a `LinkModel`: bluetoothd queues them (src/shared/att.c's
/// write queue) and the link carries them at its rate, so each reaches the device at the next
/// free slot, one slot per 1/rate seconds. The client is not slowed; the device sees the
/// values late.
public struct PacedWrites: Sendable {
    /// Queued writes: when each reaches the device, the attribute handle and the bytes.
    public private(set) var pending: [(at: SimInstant, handle: UInt16, bytes: [UInt8])] = []
    /// The first free slot.
    public private(set) var nextSlot = SimInstant.zero

    /// No writes queued.
    public init() {}

    /// Queues a write at `now` that takes `seconds` of the link; returns when it reaches the device.
    @discardableResult
    public mutating func enqueue(handle: UInt16, bytes: [UInt8], at now: SimInstant, seconds: Double) -> SimInstant {
        let slot = max(nextSlot, now)
        pending.append((slot, handle, bytes))
        nextSlot = slot.advanced(bySeconds: seconds)
        return slot
    }

    /// When the next queued write reaches the device.
    public var nextDeadline: SimInstant? { pending.first?.at }

    /// Takes the writes that reach the device at or before `now`, in order.
    public mutating func due(through now: SimInstant) -> [(handle: UInt16, bytes: [UInt8])] {
        let count = pending.prefix { $0.at <= now }.count
        let due = pending.prefix(count).map { (handle: $0.handle, bytes: $0.bytes) }
        pending.removeFirst(count)
        return due
    }
}
