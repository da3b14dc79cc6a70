/// A reading as the gateway keeps it: the value and when it was last heard.
public struct StoredReading: Sendable, Hashable {
    /// The reading.
    public var reading: Reading
    /// When it was last reported (the engine's clock).
    public var at: Duration

    /// `reading`, heard at `at`.
    public init(reading: Reading, at: Duration) {
        self.reading = reading
        self.at = at
    }
}

/// One device the gateway has heard: its latest readings and its counters.
/// Its size is bounded: at most ``GatewayConfig/maxReadingsPerDevice``
/// readings and one counter per decode failure reason.
public struct DeviceEntry: Sendable {
    /// The address: the device's id.
    public let address: DeviceAddress
    /// The advertised name, if any.
    public var name: String?
    /// The format its advertisements were last decoded in.
    public var kind: DeviceKind
    /// Whether its BTHome data is encrypted.
    public var encrypted = false
    /// When it was first heard (the engine's clock).
    public var firstSeen: Duration
    /// When it was last heard.
    public var lastSeen: Duration
    /// The RSSI, exponentially smoothed (dBm); nil until a report carries one.
    public var rssi: Double?
    /// The last RSSI heard.
    public var lastRSSI: Int?
    /// Advertisement reports heard (coalesced reports included).
    public var reports = 0
    /// Reports decoded and accepted.
    public var decoded = 0
    /// Reports dropped as repeats (same packet id or encryption counter).
    public var duplicates = 0
    /// Decode failures and problems, by reason (``DecodeFailure/reason``).
    public var errors: [String: Int] = [:]
    /// The last decode failure or problem, with when it happened.
    public var lastError: (failure: DecodeFailure, at: Duration)?
    /// The latest reading of each name.
    public var readings: [ReadingKey: StoredReading] = [:]
    /// BTHome firmware version, when the device sends it.
    public var firmware: String?
    /// BTHome device type id, when the device sends it.
    public var deviceTypeID: UInt16?

    /// The last accepted BTHome packet id and when it was accepted.
    var packet: (id: UInt8, at: Duration)?
    /// The last accepted encryption counter.
    var counter: UInt32?
    /// When the last `reading` event for this device went out.
    var lastEventAt: Duration?
    /// Readings changed since that event.
    var changed: Set<ReadingKey> = []
    /// When the `reading` update waiting for the rate limits is due (nil: none waits).
    var pendingDue: Duration?

    /// A device first heard at `now`.
    init(address: DeviceAddress, kind: DeviceKind, at now: Duration) {
        self.address = address
        self.kind = kind
        firstSeen = now
        lastSeen = now
    }

    /// The sum of ``errors``.
    public var errorCount: Int { errors.values.reduce(0, +) }
}
