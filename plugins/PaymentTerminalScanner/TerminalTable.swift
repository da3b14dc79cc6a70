import PaymentTerminalProfile

/// How the terminal table smooths RSSI and chooses the nearest terminal.
public struct SelectionPolicy: Sendable, Hashable {
    /// EWMA weight of a new RSSI sample, in (0, 1]: 1 keeps only the latest.
    public var smoothing: Double
    /// The weakest smoothed RSSI (dBm) at which a terminal may be chosen.
    public var thresholdDBm: Double
    /// How much stronger (dB) another terminal must be to take over, and how
    /// far below the threshold the chosen one may fall before it is dropped.
    public var marginDB: Double
    /// How long another terminal must stay better by the margin to take over.
    public var dwell: Duration
    /// A terminal not seen for this long leaves the table.
    public var expiry: Duration
    /// How long the table listens, from the first terminal heard, before its first automatic choice: every
    /// terminal in range is heard (a few advertising intervals) and the nearest is chosen, not the first heard.
    public var settle: Duration

    /// A policy; the defaults suit a lane with terminals a metre or two away.
    public init(
        smoothing: Double = 0.3, thresholdDBm: Double = -75, marginDB: Double = 6, dwell: Duration = .seconds(3),
        expiry: Duration = .seconds(10), settle: Duration = .zero
    ) {
        self.smoothing = smoothing
        self.thresholdDBm = thresholdDBm
        self.marginDB = marginDB
        self.dwell = dwell
        self.expiry = expiry
        self.settle = settle
    }
}

/// A terminal the scanner has seen.
public struct TerminalEntry: Sendable, Hashable {
    /// The peripheral identifier (stable across restarts).
    public var id: String
    /// The advertised name, when known.
    public var name: String?
    /// Exponentially smoothed RSSI, dBm; -127 while ``rssiKnown`` is false.
    public var smoothedRSSI: Double
    /// The latest raw RSSI, dBm; -127 while ``rssiKnown`` is false.
    public var lastRSSI: Int
    /// False while every advertisement heard came without a usable RSSI
    /// (the controller reported 127, "not available"): such a terminal can be
    /// pinned by name but is never chosen automatically.
    public var rssiKnown: Bool = true
    /// When it was last seen (the table's clock).
    public var lastSeen: Duration
    /// Battery level 0 ... 100, once read.
    public var batteryLevel: UInt8?
    /// Terminal Info, once read on connect. Its `terminalID` is the
    /// terminal's identity in the journal: it survives address changes.
    public var info: TerminalInfo?
}

/// How the table chooses its terminal.
public enum SelectionMode: Sendable, Hashable {
    /// The nearest above the threshold, with hysteresis.
    case automatic
    /// The one an operator named (`pos.select`), whatever its RSSI.
    case pinned(String)
    /// None (`pos.release`) until the next select or ``TerminalTable/resumeAutomatic(at:)``.
    case released
}

/// The scanner's table of terminals and its choice of one: pure, with time
/// as an input (any monotonic origin), so that tests drive it exactly.
///
/// The choice does not flap: another terminal takes over only when its
/// smoothed RSSI beats the chosen one's by ``SelectionPolicy/marginDB`` for
/// ``SelectionPolicy/dwell`` without a break; the chosen one is dropped only
/// when it expires or falls ``SelectionPolicy/marginDB`` below the threshold.
public struct TerminalTable: Sendable {
    /// The policy.
    public let policy: SelectionPolicy
    /// How the terminal is chosen.
    public private(set) var mode: SelectionMode = .automatic
    /// The chosen terminal's id, if any.
    public private(set) var selected: String?
    private var entries: [String: TerminalEntry] = [:]
    private var challenger: (id: String, since: Duration)?
    /// When the first terminal of this listening period was heard (nil while the table is empty).
    private var listeningSince: Duration?

    /// An empty table.
    public init(policy: SelectionPolicy) {
        self.policy = policy
    }

    /// The terminals, strongest smoothed RSSI first (ties by id).
    public var terminals: [TerminalEntry] {
        entries.values.sorted { ($0.smoothedRSSI, $1.id) > ($1.smoothedRSSI, $0.id) }
    }

    /// The entry for `id`.
    public func entry(_ id: String) -> TerminalEntry? { entries[id] }

    /// Records an advertisement of `id` heard at `rssi` dBm (nil: no usable
    /// RSSI, see `Discovery.measuredRSSI`), then re-evaluates.
    public mutating func observe(id: String, name: String?, rssi: Int?, at now: Duration) {
        if listeningSince == nil { listeningSince = now }
        if var entry = entries[id] {
            if let rssi {
                if entry.rssiKnown {
                    entry.smoothedRSSI += policy.smoothing * (Double(rssi) - entry.smoothedRSSI)
                } else {
                    entry.smoothedRSSI = Double(rssi)
                }
                entry.lastRSSI = rssi
                entry.rssiKnown = true
            }
            entry.lastSeen = now
            if let name { entry.name = name }
            entries[id] = entry
        } else {
            var entry = TerminalEntry(
                id: id, name: name, smoothedRSSI: Double(rssi ?? -127), lastRSSI: rssi ?? -127, lastSeen: now,
                batteryLevel: nil, info: nil)
            entry.rssiKnown = rssi != nil
            entries[id] = entry
        }
        evaluate(at: now)
    }

    /// Counts `id` as seen at `now` without an advertisement: the lane's
    /// connected terminal. A connected LE peripheral's controller stops
    /// (legacy) advertising until the link ends (seen against bluetoothd in
    /// the VM), so without this the chosen terminal would expire while in use.
    public mutating func touch(_ id: String, at now: Duration) {
        entries[id]?.lastSeen = now
    }

    /// Records a battery level read from `id`.
    public mutating func setBatteryLevel(_ level: UInt8, for id: String) {
        entries[id]?.batteryLevel = level
    }

    /// Records the Terminal Info read from `id`.
    public mutating func setInfo(_ info: TerminalInfo, for id: String) {
        entries[id]?.info = info
    }

    /// The peripheral id of the terminal an operator named: by peripheral
    /// id, else by Terminal Info id, else by advertised name (nil when none
    /// or more than one matches).
    public func resolve(_ name: String) -> String? {
        if entries[name] != nil { return name }
        let byInfo = entries.values.filter { $0.info?.terminalID == name }
        if byInfo.count == 1 { return byInfo[0].id }
        let byName = entries.values.filter { $0.name == name }
        return byName.count == 1 ? byName[0].id : nil
    }

    /// Expires stale terminals and re-evaluates the choice.
    public mutating func tick(at now: Duration) {
        evaluate(at: now)
    }

    /// Pins the choice to `id` (a known terminal); false if unknown.
    public mutating func select(_ id: String, at now: Duration) -> Bool {
        guard entries[id] != nil else { return false }
        mode = .pinned(id)
        challenger = nil
        evaluate(at: now)
        return true
    }

    /// Drops the choice and chooses nothing until a select or resume.
    public mutating func release() {
        mode = .released
        selected = nil
        challenger = nil
    }

    /// Returns to automatic selection.
    public mutating func resumeAutomatic(at now: Duration) {
        mode = .automatic
        evaluate(at: now)
    }

    private mutating func evaluate(at now: Duration) {
        entries = entries.filter { now - $0.value.lastSeen < policy.expiry }
        if entries.isEmpty { listeningSince = nil }
        if let current = selected, entries[current] == nil { selected = nil }
        switch mode {
        case .released:
            selected = nil
        case .pinned(let id):
            selected = entries[id] == nil ? nil : id
        case .automatic:
            chooseAutomatically(at: now)
        }
    }

    private mutating func chooseAutomatically(at now: Duration) {
        let candidates = terminals.filter { $0.rssiKnown && $0.smoothedRSSI >= policy.thresholdDBm }
        guard let currentID = selected, let current = entries[currentID], current.rssiKnown,
            current.smoothedRSSI >= policy.thresholdDBm - policy.marginDB
        else {
            challenger = nil
            // The first choice waits for the settle period: the nearest, not the first heard.
            if selected == nil, let since = listeningSince, now - since < policy.settle { return }
            selected = candidates.first?.id
            return
        }
        guard let best = candidates.first(where: { $0.id != currentID }),
            best.smoothedRSSI >= current.smoothedRSSI + policy.marginDB
        else {
            challenger = nil
            return
        }
        if let challenger, challenger.id == best.id {
            if now - challenger.since >= policy.dwell {
                selected = best.id
                self.challenger = nil
            }
        } else {
            challenger = (best.id, now)
        }
    }
}
