/// A fault a scenario schedules: `fault` happens `after` seconds past its trigger.
public struct ScheduledFault: Sendable, Equatable {
    /// What starts the clock of a scheduled fault.
    public enum Trigger: Sendable, Equatable {
        /// blesim's start (simulation time zero).
        case start
        /// Each time a link to the device comes up (on any adapter).
        case connect(DeviceAddress)
    }

    /// What starts the clock.
    public var trigger: Trigger
    /// Seconds after the trigger.
    public var after: Double
    /// What happens.
    public var fault: Fault

    /// A scheduled fault.
    public init(trigger: Trigger = .start, after: Double, fault: Fault) {
        self.trigger = trigger
        self.after = after
        self.fault = fault
    }
}

/// The scenario's scheduled faults on the simulation clock, pure: which faults are due when.
public struct FaultSchedule: Sendable {
    /// The scenario's entries, in file order.
    public let entries: [ScheduledFault]
    /// Faults waiting for their time: (time, sequence for a stable order, fault).
    private var pending: [(at: SimInstant, sequence: Int, fault: Fault)] = []
    private var sequence = 0

    /// The schedule of `entries`, with the start-triggered ones counted from `start`.
    public init(_ entries: [ScheduledFault], start: SimInstant) {
        self.entries = entries
        for entry in entries where entry.trigger == .start {
            add(entry.fault, at: start.advanced(bySeconds: entry.after))
        }
    }

    private mutating func add(_ fault: Fault, at time: SimInstant) {
        pending.append((time, sequence, fault))
        sequence += 1
    }

    /// A link to `address` came up at `now`: its connect-triggered faults are scheduled.
    public mutating func linkUp(_ address: DeviceAddress, at now: SimInstant) {
        for entry in entries where entry.trigger == .connect(address) {
            add(entry.fault, at: now.advanced(bySeconds: entry.after))
        }
    }

    /// When the next fault is due.
    public var nextDeadline: SimInstant? { pending.map(\.at).min() }

    /// Takes the faults due at or before `now`, earliest first (file order for equal times).
    public mutating func due(through now: SimInstant) -> [Fault] {
        let due = pending.filter { $0.at <= now }.sorted { ($0.at, $0.sequence) < ($1.at, $1.sequence) }
        guard !due.isEmpty else { return [] }
        pending.removeAll { $0.at <= now }
        return due.map(\.fault)
    }
}
