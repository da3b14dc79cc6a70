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
    /// The adapter is off.
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

/// Derives ``ManagerState`` from what the backend says: whether the Bluetooth
/// daemon is there, whether its state has been read, the adapters present and
/// whether each is powered, and whether the daemon refused us.
///
/// Feed it inputs; each returns the new state when it changed, nil otherwise.
struct ManagerStateMachine: Sendable {
    /// An adapter as the state machine needs it.
    typealias Adapter = AdapterStatus

    /// An input.
    public enum Input: Hashable, Sendable {
        /// The Bluetooth daemon started or left.
        case bluetoothdPresent(Bool)
        /// The daemon's state was read (all of it); these are its adapters.
        case treeLoaded([Adapter])
        /// An adapter appeared or changed.
        case adapterUpdated(Adapter)
        /// The adapter with this ``AdapterStatus/id`` disappeared.
        case adapterRemoved(id: String)
        /// A call was refused with AccessDenied.
        case accessDenied
    }

    /// The name of the adapter to use (`hci1`), nil for the first one (by name) present.
    public let preferredAdapter: String?
    /// The current state.
    public private(set) var state: ManagerState = .unknown
    /// The adapter in use, when there is one.
    public private(set) var adapter: AdapterStatus?
    /// The backend's identifier of the adapter in use (``AdapterStatus/id``), when there is one.
    public var adapterID: String? { adapter?.id }

    private var bluetoothdPresent = false
    private var everPresent = false
    private var treeLoaded = false
    private var refused = false
    private var adapters: [String: Adapter] = [:]

    /// A machine in state unknown that will use the adapter named
    /// `preferredAdapter` (e.g. `hci1`) or, when nil, the first adapter by name.
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
            adapters = Dictionary(list.map { ($0.id, $0) }, uniquingKeysWith: { $1 })
        case .adapterUpdated(let adapter):
            adapters[adapter.id] = adapter
        case .adapterRemoved(let id):
            adapters[id] = nil
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
        let candidates = adapters.values.filter { preferredAdapter == nil || $0.name == preferredAdapter }
        guard let chosen = candidates.min(by: { ($0.name, $0.id) < ($1.name, $1.id) }) else {
            adapter = nil
            return .unsupported
        }
        adapter = chosen
        return chosen.powered ? .poweredOn : .poweredOff
    }
}

/// An adapter as a backend reports it to the managers, decoded by the
/// backend (BlueZ: from the Adapter1 interface of `/org/bluez/hciN`).
public struct AdapterStatus: Hashable, Sendable {
    /// The backend's identifier of the adapter: what its devices name as
    /// their adapter and what the backend's calls take (BlueZ: its object
    /// path, `/org/bluez/hci0`). Opaque to the managers.
    public var id: String
    /// The adapter's name as users give it (`hci0`): what
    /// ``CentralManager/Options/adapter`` and ``PeripheralManager/Options/adapter`` match.
    public var name: String
    /// The adapter's Bluetooth address (`AA:BB:CC:DD:EE:FF`), nil until the backend knows it.
    public var address: String?
    /// Whether the adapter is powered.
    public var powered: Bool

    /// The status of the adapter `id`, called `name`.
    public init(id: String, name: String, address: String? = nil, powered: Bool) {
        self.id = id
        self.name = name
        self.address = address
        self.powered = powered
    }
}
