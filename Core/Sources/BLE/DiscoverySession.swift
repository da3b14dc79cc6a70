/// The one BlueZ discovery session shared by every scanner, reference counted.
///
/// BlueZ keeps one discovery per D-Bus client: the first scanner starts it
/// (SetDiscoveryFilter then StartDiscovery), later scanners only change the
/// merged filter, and the last one to stop stops it (StopDiscovery). After
/// bluetoothd restarts or the adapter powers back on, ``resume()`` gives the
/// calls that bring the running scan back.
struct DiscoverySession: Sendable {
    /// Identifies one scanner.
    public typealias Token = UInt64

    /// A call to make on Adapter1.
    public enum Action: Hashable, Sendable {
        /// SetDiscoveryFilter with this filter.
        case setFilter(DiscoveryFilter)
        /// StartDiscovery.
        case start
        /// StopDiscovery.
        case stop
    }

    private var nextToken: Token = 1
    private var scanners: [Token: ScanFilter] = [:]
    /// Scanners served by an advertisement monitor: no discovery for them.
    private var passive: Set<Token> = []
    private var appliedFilter: DiscoveryFilter?

    /// No scanners.
    public init() {}

    /// No scanners, with tokens continuing after `previous`'s (BlueZ forgot
    /// its discovery: the adapter powered off or bluetoothd left).
    public init(continuingAfter previous: DiscoverySession) {
        nextToken = previous.nextToken
    }

    /// Whether any scanner needs discovery running (one that is not passive).
    public var isActive: Bool { scanners.count > passive.count }

    /// Whether any scanner is open, passive ones included.
    public var hasScanners: Bool { !scanners.isEmpty }

    /// The scanners' filters by token.
    public var filters: [Token: ScanFilter] { scanners }

    /// The filter BlueZ should have now: the merge of the scanners that are not passive.
    public var mergedFilter: DiscoveryFilter {
        DiscoveryFilter(merging: scanners.keys.sorted().filter { !passive.contains($0) }.compactMap { scanners[$0] })
    }

    /// Adds a scanner; the first one that is not `passive` starts discovery.
    public mutating func add(_ filter: ScanFilter, passive isPassive: Bool = false) -> (Token, [Action]) {
        let token = nextToken
        nextToken += 1
        if isPassive {
            scanners[token] = filter
            passive.insert(token)
            return (token, [])
        }
        let wasActive = isActive
        scanners[token] = filter
        var actions = refreshFilter()
        if !wasActive { actions.append(.start) }
        return (token, actions)
    }

    /// A passive scanner falls back to discovery (its monitor is unavailable or was released).
    public mutating func fallBack(_ token: Token) -> [Action] {
        guard passive.remove(token) != nil else { return [] }
        let wasActive = scanners.count - 1 > passive.count
        var actions = refreshFilter()
        if !wasActive { actions.append(.start) }
        return actions
    }

    /// Changes a scanner's filter.
    public mutating func update(_ token: Token, to filter: ScanFilter) -> [Action] {
        guard scanners[token] != nil else { return [] }
        scanners[token] = filter
        return refreshFilter()
    }

    /// Removes a scanner; the last one stops discovery. Unknown or already
    /// removed tokens do nothing.
    public mutating func remove(_ token: Token) -> [Action] {
        guard scanners.removeValue(forKey: token) != nil else { return [] }
        if passive.remove(token) != nil { return [] }
        if !isActive {
            appliedFilter = nil
            return [.stop]
        }
        return refreshFilter()
    }

    /// bluetoothd or the adapter came back: BlueZ forgot the discovery, so
    /// set the filter and start again when anyone is scanning.
    public mutating func resume() -> [Action] {
        appliedFilter = nil
        guard isActive else { return [] }
        return refreshFilter() + [.start]
    }

    private mutating func refreshFilter() -> [Action] {
        let merged = mergedFilter
        guard merged != appliedFilter else { return [] }
        appliedFilter = merged
        return [.setFilter(merged)]
    }
}
