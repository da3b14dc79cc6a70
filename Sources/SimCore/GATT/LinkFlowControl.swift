/// Flow control a real link puts on its writers under a `LinkModel` (pure arithmetic; blesim's
/// shell sleeps and calls as these say).
///
/// Indications (ATT, Core Specification Vol 3 Part F 3.3.3): a server has at most one
/// indication outstanding per bearer; the next waits until the client's Handle Value
/// Confirmation comes. The confirmation comes at the earliest one connection event after the
/// indication, so an indicating characteristic gets one confirmed indication per connection
/// interval.
public struct IndicationQueue: Sendable, Equatable {
    /// When the last queued indication is confirmed (the bearer is free again then).
    public private(set) var free = SimInstant.zero

    /// No indication outstanding.
    public init() {}

    /// An indication handed over at `now`: it goes when the bearer is free (the previous one
    /// confirmed) and is confirmed `roundTrip` seconds later. Returns when it is confirmed.
    public mutating func confirmation(at now: SimInstant, roundTrip: Double) -> SimInstant {
        free = max(free, now).advanced(bySeconds: roundTrip)
        return free
    }
}

extension LinkModel {
    /// Seconds from an indication to its confirmation: one connection event (the indication in
    /// one event, the confirmation in the next).
    public var indicationRoundTrip: Double { connectionIntervalMs / 1000 }
}

extension PacedWrites {
    /// Seconds from `now` until the link takes another write command (0 when it is free): how
    /// long blesim leaves the next packet of an AcquireWrite socket unread, as bluetoothd reads
    /// its socket only as fast as the L2CAP channel's credits come back.
    public func wait(at now: SimInstant) -> Double { max(0, nextSlot.seconds - now.seconds) }
}
