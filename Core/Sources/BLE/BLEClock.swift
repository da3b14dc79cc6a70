/// A point in time on a monotonic clock, in nanoseconds from an arbitrary
/// origin. The state machines take the time as an argument, so tests drive
/// them with made-up instants and nothing depends on machine speed.
public struct BLEInstant: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Nanoseconds since the clock's origin.
    public var nanoseconds: UInt64

    /// The instant `nanoseconds` after the origin.
    public init(nanoseconds: UInt64) { self.nanoseconds = nanoseconds }

    /// The clock's origin.
    public static let zero = BLEInstant(nanoseconds: 0)

    /// The instant `duration` later (or earlier, for a negative duration;
    /// clamped at the origin).
    public static func + (lhs: BLEInstant, rhs: Duration) -> BLEInstant {
        let delta = rhs.nanosecondsValue
        if delta >= 0 { return BLEInstant(nanoseconds: lhs.nanoseconds &+ UInt64(delta)) }
        let back = UInt64(-delta)
        return BLEInstant(nanoseconds: lhs.nanoseconds > back ? lhs.nanoseconds - back : 0)
    }

    /// The time from `rhs` to `lhs`.
    public static func - (lhs: BLEInstant, rhs: BLEInstant) -> Duration {
        .nanoseconds(Int64(bitPattern: lhs.nanoseconds &- rhs.nanoseconds))
    }

    /// Orders by time.
    public static func < (lhs: BLEInstant, rhs: BLEInstant) -> Bool { lhs.nanoseconds < rhs.nanoseconds }

    /// The instant as nanoseconds.
    public var description: String { "\(nanoseconds)ns" }
}

/// The clock the managers read and sleep on; injected so tests control time.
public protocol BLEClock: Sendable {
    /// The current instant.
    var now: BLEInstant { get }
    /// Returns at `deadline` or later; throws `CancellationError` when the task
    /// is cancelled first.
    func sleep(until deadline: BLEInstant) async throws
}

/// The system's monotonic clock.
public struct SystemBLEClock: BLEClock {
    private let clock = ContinuousClock()
    private let origin: ContinuousClock.Instant

    /// A clock whose origin is now.
    public init() { origin = clock.now }

    /// The current instant.
    public var now: BLEInstant { .zero + (clock.now - origin) }

    /// Sleeps on the continuous clock until `deadline`.
    public func sleep(until deadline: BLEInstant) async throws {
        try await clock.sleep(until: origin + (deadline - .zero))
    }
}

extension Duration {
    /// The duration in whole nanoseconds (saturating).
    var nanosecondsValue: Int64 {
        let (seconds, attoseconds) = components
        let (product, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        return product &+ attoseconds / 1_000_000_000
    }
}
