/// The gateway's counters since it started (`gateway.stats`).
public struct GatewayStats: Sendable, Hashable {
    /// Advertisement reports in: every report a discovery stands for
    /// (several, when the central coalesced a busy device's reports).
    public var reportsIn = 0
    /// Discoveries handled (each one decoded at most once).
    public var discoveries = 0
    /// Reports dropped by the allow and deny lists.
    public var filtered = 0
    /// Reports in no format the gateway decodes.
    public var unknownFormat = 0
    /// Reports decoded and accepted.
    public var decoded = 0
    /// Reports dropped as repeats (same BTHome packet id or encryption counter).
    public var duplicatesDropped = 0
    /// Decode failures and problems by reason (``DecodeFailure/reason``).
    public var decodeErrors: [String: Int] = [:]
    /// Readings left out because their device had ``GatewayConfig/maxReadingsPerDevice``.
    public var readingsDropped = 0
    /// Devices evicted to make room for a new one.
    public var devicesEvicted = 0
    /// Devices dropped after ``GatewayConfig/expirySeconds`` unheard.
    public var devicesExpired = 0
    /// `reading` updates handed off (events published).
    public var updatesPublished = 0
    /// Reading changes folded into a later update by the rate limits.
    public var updatesCoalesced = 0

    /// No counts yet.
    public init() {}

    /// The sum of ``decodeErrors``.
    public var decodeErrorCount: Int { decodeErrors.values.reduce(0, +) }
}
