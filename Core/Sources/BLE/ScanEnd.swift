import Synchronization

/// Why a scan's stream ended (``DiscoveryStream/end``).
///
/// A scan lives while the manager is poweredOn: when the adapter powers off,
/// bluetoothd leaves the bus or the adapter goes away, BlueZ forgets the
/// discovery and every scan's stream ends with the reason. Scans that should
/// last across those use ``CentralManager/scanWhilePoweredOn(withServices:options:onChange:_:)``.
public enum ScanEnd: String, Hashable, Sendable, CustomStringConvertible {
    /// The caller stopped it: ``CentralManager/stopScan()``, or the consumer
    /// ended its iteration (or its task was cancelled).
    case stopped
    /// The adapter was powered off (Adapter1.Powered false).
    case poweredOff
    /// bluetoothd left the bus (NameOwnerChanged for `org.bluez`) or is
    /// still loading its tree after it came back.
    case bluetoothdGone
    /// The manager's adapter went away (InterfacesRemoved for Adapter1) and
    /// no adapter is left to use.
    case adapterGone
    /// The bus refused the manager (`org.freedesktop.DBus.Error.AccessDenied`).
    case unauthorized
    /// The manager went away (released by its owner).
    case managerClosed

    /// Whether scanning can go on once the manager is poweredOn again (the
    /// adapter came back on, bluetoothd or the adapter returned).
    public var resumesWhenPoweredOn: Bool {
        switch self {
        case .poweredOff, .bluetoothdGone, .adapterGone: true
        case .stopped, .unauthorized, .managerClosed: false
        }
    }

    /// Why scans end when the manager leaves poweredOn for `state`.
    init(leavingPoweredOnFor state: ManagerState) {
        switch state {
        case .poweredOff: self = .poweredOff
        case .unsupported: self = .adapterGone
        case .unauthorized: self = .unauthorized
        case .unknown, .resetting, .poweredOn: self = .bluetoothdGone
        }
    }

    /// The raw name (`poweredOff`, ...).
    public var description: String { rawValue }
}

/// The end reason one scan's stream and the manager share: set once, by
/// whoever ends the scan first.
final class ScanEnding: Sendable {
    private let reason = Mutex<ScanEnd?>(nil)

    /// Records `end` unless a reason is already set.
    func set(_ end: ScanEnd) {
        reason.withLock { if $0 == nil { $0 = end } }
    }

    /// The reason, nil while the scan runs.
    var value: ScanEnd? { reason.withLock { $0 } }
}
