import GATT

/// Decides which subscribed central gets which characteristic value when,
/// and holds back what a slow central cannot take yet. Pure: the caller
/// passes the time and performs the returned ``Notification``s.
///
/// Per (central, characteristic):
/// - a new value goes out at once when it differs from the value last sent
///   to that central by at least the characteristic's delta, when it is
///   marked urgent (a threshold crossing), or when nothing was sent yet;
/// - any other change goes out when the interval since the last send has
///   passed (``tick(now:)`` at ``nextDeadline``); an unchanged value is not
///   repeated;
/// - when the transport refuses a notification (its queue is full) the
///   central is blocked: its due characteristics wait in a queue that keeps
///   one entry per characteristic (a newer value replaces the waiting one)
///   and at most ``queueLimit`` entries (the oldest is dropped and counted).
///   ``transmitReady(central:now:)`` sends the latest values in order.
///   Interval work for a blocked central waits until it is ready again
///   (``tick(now:)`` and ``nextDeadline`` skip it, so a caller sleeping until
///   the deadline never spins on a stalled central).
public struct NotificationPolicy: Sendable {
    /// A central, as the BLE layer names it (for BlueZ, the device path).
    public typealias Central = String

    /// When one characteristic's changes are notified.
    public struct Rule: Sendable, Hashable {
        /// The smallest change sent at once; nil waits for the interval.
        public var delta: Double?
        /// Seconds after which any change is sent.
        public var interval: Double

        /// A rule; see each property.
        public init(delta: Double?, interval: Double) {
            self.delta = delta
            self.interval = interval
        }
    }

    /// A characteristic's value: the bytes to send, and the number the delta
    /// compares (nil for a value without one, such as the summary).
    public struct Value: Sendable, Hashable {
        /// The encoded value.
        public var bytes: [UInt8]
        /// The physical value, for the delta.
        public var number: Double?
        /// Sent at once whatever the delta (a threshold crossing).
        public var urgent: Bool

        /// A value; see each property.
        public init(bytes: [UInt8], number: Double? = nil, urgent: Bool = false) {
            self.bytes = bytes
            self.number = number
            self.urgent = urgent
        }
    }

    /// One notification to send to one central.
    public struct Notification: Sendable, Hashable {
        /// The subscriber.
        public var central: Central
        /// The characteristic.
        public var characteristic: BluetoothUUID
        /// The bytes.
        public var value: [UInt8]
    }

    private struct Subscription: Sendable {
        var lastSent: Value?
        var lastSentTime: Double
    }

    /// The rules by characteristic; one without a rule uses ``defaultRule``.
    public var rules: [BluetoothUUID: Rule]
    /// The rule for characteristics without their own.
    public var defaultRule: Rule
    /// The most characteristics waiting for one blocked central.
    public let queueLimit: Int

    private var current: [BluetoothUUID: Value] = [:]
    private var subscriptions: [Central: [BluetoothUUID: Subscription]] = [:]
    private var pending: [Central: [BluetoothUUID]] = [:]
    private var blocked: Set<Central> = []
    /// Pending values dropped because a central's queue was full, by central.
    public private(set) var dropped: [Central: Int] = [:]

    /// A policy with `rules`, `defaultRule` for the rest and `queueLimit`.
    public init(rules: [BluetoothUUID: Rule], defaultRule: Rule, queueLimit: Int) {
        self.rules = rules
        self.defaultRule = defaultRule
        self.queueLimit = max(1, queueLimit)
    }

    /// The characteristics `central` is subscribed to, sorted.
    public func subscriptions(of central: Central) -> [BluetoothUUID] {
        (subscriptions[central].map { Array($0.keys) } ?? []).sorted()
    }

    /// Every central with a subscription, sorted.
    public var centrals: [Central] { subscriptions.keys.sorted() }

    /// The characteristics waiting for `central`, oldest first.
    public func queued(for central: Central) -> [BluetoothUUID] { pending[central] ?? [] }

    /// Whether `central`'s transmit queue was full at the last attempt.
    public func isBlocked(_ central: Central) -> Bool { blocked.contains(central) }

    /// `central` subscribed to `characteristic` at `now`: it gets the current
    /// value at once (if there is one).
    public mutating func subscribe(
        central: Central, characteristic: BluetoothUUID, now: Double
    ) -> [Notification] {
        subscriptions[central, default: [:]][characteristic] = Subscription(lastSent: nil, lastSentTime: now)
        guard current[characteristic] != nil else { return [] }
        return emit(central: central, characteristic: characteristic, now: now).map { [$0] } ?? []
    }

    /// `central` unsubscribed from `characteristic`.
    public mutating func unsubscribe(central: Central, characteristic: BluetoothUUID) {
        subscriptions[central]?[characteristic] = nil
        pending[central]?.removeAll { $0 == characteristic }
        if subscriptions[central]?.isEmpty == true { forget(central) }
    }

    /// `central` disconnected: all its subscriptions and its queue go.
    public mutating func disconnect(central: Central) { forget(central) }

    private mutating func forget(_ central: Central) {
        subscriptions[central] = nil
        pending[central] = nil
        blocked.remove(central)
    }

    /// `characteristic` has a new value at `now`: the notifications due at once.
    public mutating func update(
        characteristic: BluetoothUUID, value: Value, now: Double
    ) -> [Notification] {
        current[characteristic] = value
        let rule = rules[characteristic] ?? defaultRule
        var due: [Notification] = []
        for central in centrals {
            guard let subscription = subscriptions[central]?[characteristic] else { continue }
            guard Self.isImmediate(value, after: subscription.lastSent, rule: rule) else { continue }
            if let notification = emit(central: central, characteristic: characteristic, now: now) {
                due.append(notification)
            }
        }
        return due
    }

    /// The notifications whose interval has passed at `now`.
    public mutating func tick(now: Double) -> [Notification] {
        var due: [Notification] = []
        for central in centrals where !blocked.contains(central) {
            for characteristic in subscriptions(of: central) where isIntervalDue(central, characteristic, now: now) {
                if let notification = emit(central: central, characteristic: characteristic, now: now) {
                    due.append(notification)
                }
            }
        }
        return due
    }

    /// When ``tick(now:)`` next has something to send, or nil.
    public var nextDeadline: Double? {
        var earliest: Double?
        for (central, characteristics) in subscriptions where !blocked.contains(central) {
            for (characteristic, subscription) in characteristics {
                guard let value = current[characteristic], value.bytes != subscription.lastSent?.bytes else { continue }
                let deadline = subscription.lastSentTime + (rules[characteristic] ?? defaultRule).interval
                earliest = min(earliest ?? deadline, deadline)
            }
        }
        return earliest
    }

    /// The transport did not take `notification` (the central's queue is
    /// full): the central is blocked and the characteristic waits. Call it
    /// for every notification of a batch that was not sent.
    public mutating func refused(_ notification: Notification) {
        guard subscriptions[notification.central]?[notification.characteristic] != nil else { return }
        blocked.insert(notification.central)
        enqueue(notification.characteristic, for: notification.central)
    }

    /// The transport can take more for `central`: the waiting
    /// characteristics' latest values, oldest first.
    public mutating func transmitReady(central: Central, now: Double) -> [Notification] {
        blocked.remove(central)
        let waiting = pending[central] ?? []
        pending[central] = nil
        return waiting.compactMap { emit(central: central, characteristic: $0, now: now) }
    }

    private static func isImmediate(_ value: Value, after last: Value?, rule: Rule) -> Bool {
        guard let last else { return true }
        if value.urgent { return true }
        guard let delta = rule.delta, let new = value.number, let old = last.number else { return false }
        return abs(new - old) >= delta && value.bytes != last.bytes
    }

    private func isIntervalDue(_ central: Central, _ characteristic: BluetoothUUID, now: Double) -> Bool {
        guard let subscription = subscriptions[central]?[characteristic], let value = current[characteristic],
            value.bytes != subscription.lastSent?.bytes
        else { return false }
        return now >= subscription.lastSentTime + (rules[characteristic] ?? defaultRule).interval
    }

    /// Sends (records and returns) or, for a blocked central, queues.
    private mutating func emit(central: Central, characteristic: BluetoothUUID, now: Double) -> Notification? {
        guard let value = current[characteristic], subscriptions[central]?[characteristic] != nil else { return nil }
        if blocked.contains(central) {
            enqueue(characteristic, for: central)
            return nil
        }
        subscriptions[central]?[characteristic] = Subscription(lastSent: value, lastSentTime: now)
        return Notification(central: central, characteristic: characteristic, value: value.bytes)
    }

    private mutating func enqueue(_ characteristic: BluetoothUUID, for central: Central) {
        var queue = pending[central] ?? []
        guard !queue.contains(characteristic) else { return }
        queue.append(characteristic)
        if queue.count > queueLimit {
            queue.removeFirst(queue.count - queueLimit)
            dropped[central, default: 0] += 1
        }
        pending[central] = queue
    }
}
