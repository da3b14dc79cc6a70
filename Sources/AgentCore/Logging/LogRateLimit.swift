/// Lets at most `burst` lines of one kind through per `window`; the rest are
/// counted, and the first line let through after them says how many were
/// not written. Memory: three numbers, whatever the rate.
public struct LogRateLimit: Sendable {
    /// Lines let through per window.
    public let burst: Int
    /// The window.
    public let window: Duration
    private var windowStart: ContinuousClock.Instant?
    private var written = 0
    private var suppressed = 0

    /// A limit of `burst` lines per `window`.
    public init(burst: Int, window: Duration) {
        self.burst = burst
        self.window = window
    }

    /// Whether a line at `now` is written: nil if not (it is counted), else
    /// how many were not written since the last one that was.
    public mutating func admit(at now: ContinuousClock.Instant) -> Int? {
        if let start = windowStart, now - start < window {
            guard written < burst else {
                suppressed += 1
                return nil
            }
        } else {
            windowStart = now
            written = 0
        }
        written += 1
        defer { suppressed = 0 }
        return suppressed
    }
}
