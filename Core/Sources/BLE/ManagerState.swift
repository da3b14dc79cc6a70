/// The state of a central or peripheral manager, as in `CBManagerState`.
public enum ManagerState: String, Hashable, Sendable, CustomStringConvertible {
    /// Not known yet: bluetoothd has not been seen, or the object tree is not loaded.
    case unknown
    /// bluetoothd left the bus after having been there; waiting for it to return.
    case resetting
    /// No (chosen) adapter.
    case unsupported
    /// The bus refused us (org.freedesktop.DBus.Error.AccessDenied).
    case unauthorized
    /// The adapter is off (Adapter1.Powered false).
    case poweredOff
    /// The adapter is on: operations are allowed.
    case poweredOn

    /// The error an operation gets in this state, nil when poweredOn.
    public var refusal: BLEError? {
        switch self {
        case .poweredOn: nil
        case .poweredOff: .poweredOff
        case .unsupported: .unsupported
        case .unauthorized: BLEError(.unauthorized)
        case .unknown, .resetting: BLEError(.unavailable, message: "Bluetooth state is \(rawValue)")
        }
    }

    /// The raw name.
    public var description: String { rawValue }
}

/// Derives ``ManagerState`` from what the bus says: bluetoothd's presence
/// (NameOwnerChanged for `org.bluez`), whether the object tree is loaded, the
/// adapters present and their Powered property, and whether the bus refused us.
///
/// Feed it inputs; each returns the new state when it changed, nil otherwise.
struct ManagerStateMachine: Sendable {
    /// An adapter as the state machine needs it.
    typealias Adapter = AdapterStatus

    /// An input.
    public enum Input: Hashable, Sendable {
        /// `org.bluez` got an owner (bluetoothd started) or lost it.
        case bluetoothdPresent(Bool)
        /// The object tree was loaded (GetManagedObjects answered); adapters follow.
        case treeLoaded([Adapter])
        /// An adapter appeared or its Powered changed.
        case adapterUpdated(Adapter)
        /// An adapter disappeared (InterfacesRemoved for Adapter1).
        case adapterRemoved(path: String)
        /// A call was refused with AccessDenied.
        case accessDenied
    }

    /// The adapter to use, nil for the first one (by path) present.
    public let preferredAdapter: String?
    /// The current state.
    public private(set) var state: ManagerState = .unknown
    /// The adapter in use, when there is one.
    public private(set) var adapterPath: String?

    private var bluetoothdPresent = false
    private var everPresent = false
    private var treeLoaded = false
    private var refused = false
    private var adapters: [String: Bool] = [:]

    /// A machine in state unknown that will use `preferredAdapter` (e.g.
    /// `/org/bluez/hci1`) or, when nil, the first adapter.
    public init(preferredAdapter: String? = nil) {
        self.preferredAdapter = preferredAdapter
    }

    /// Applies `input`; returns the new state if it changed.
    public mutating func apply(_ input: Input) -> ManagerState? {
        switch input {
        case .bluetoothdPresent(let present):
            bluetoothdPresent = present
            everPresent = everPresent || present
            treeLoaded = false
            adapters = [:]
        case .treeLoaded(let list):
            treeLoaded = true
            adapters = Dictionary(list.map { ($0.path, $0.powered) }, uniquingKeysWith: { $1 })
        case .adapterUpdated(let adapter):
            adapters[adapter.path] = adapter.powered
        case .adapterRemoved(let path):
            adapters[path] = nil
        case .accessDenied:
            refused = true
        }
        let next = derive()
        guard next != state else { return nil }
        state = next
        return next
    }

    private mutating func derive() -> ManagerState {
        if refused { return .unauthorized }
        guard bluetoothdPresent else { return everPresent ? .resetting : .unknown }
        guard treeLoaded else { return .unknown }
        let chosen = preferredAdapter ?? adapters.keys.min()
        guard let chosen, let powered = adapters[chosen] else {
            adapterPath = nil
            return .unsupported
        }
        adapterPath = chosen
        return powered ? .poweredOn : .poweredOff
    }
}

/// An adapter as the managers see it: its object path and whether it is powered.
public struct AdapterStatus: Hashable, Sendable {
    /// The adapter's object path (`/org/bluez/hci0`).
    public var path: String
    /// Adapter1.Powered.
    public var powered: Bool
    /// A description of an adapter at `path`.
    public init(path: String, powered: Bool) {
        self.path = path
        self.powered = powered
    }
}
