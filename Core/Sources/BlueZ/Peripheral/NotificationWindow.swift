/// The transmit queue of notifications and indications, as counts: pure.
///
/// A notification holds a slot from the moment its `PropertiesChanged` is
/// queued until the connection has written it to the bus; an indication to a
/// subscribed characteristic holds its slot until bluetoothd calls `Confirm`
/// (or its deadline passes). ``take()`` refuses when every slot is held, and
/// the next ``release()`` after such a refusal reports that updates may be
/// tried again (the ready-to-update event).
public struct NotificationWindow: Hashable, Sendable {
    /// How many updates may be in flight at once.
    public let limit: Int
    /// How many are in flight.
    public private(set) var inFlight = 0
    /// Whether a caller was refused since the last ready report.
    public private(set) var refused = false

    /// A window of `limit` slots (at least 1).
    public init(limit: Int) { self.limit = max(1, limit) }

    /// Takes a slot; false (and remembered) when none is free.
    public mutating func take() -> Bool {
        guard inFlight < limit else {
            refused = true
            return false
        }
        inFlight += 1
        return true
    }

    /// Frees a slot; true when a refused caller should now hear ready-to-update.
    public mutating func release() -> Bool {
        inFlight = max(0, inFlight - 1)
        guard refused, inFlight < limit else { return false }
        refused = false
        return true
    }
}
