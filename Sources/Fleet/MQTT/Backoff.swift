/// Reconnection delays: 1 s doubling to a ceiling (60 s), each with up to
/// 25 % random jitter so that a fleet does not reconnect in lock-step after
/// its broker restarts. Reset by a successful connection.
struct Backoff: Sendable, Hashable {
    /// The first delay.
    var initial: Duration = .seconds(1)
    /// The longest delay.
    var ceiling: Duration = .seconds(60)
    /// Failures since the last success.
    private(set) var failures = 0

    /// The delay before the next attempt, counting one more failure.
    mutating func next<G: RandomNumberGenerator>(using generator: inout G) -> Duration {
        let exponent = min(failures, 16)
        failures += 1
        let base = min(initial * (1 << exponent), ceiling)
        let jitter = Double.random(in: 0...0.25, using: &generator)
        return base + base * jitter
    }

    /// A success: the next delay is the initial one again.
    mutating func reset() { failures = 0 }
}
