import GATT

/// How a value is written to a remote characteristic.
public enum WriteType: Hashable, Sendable {
    /// Write request; the peer confirms (long values through BlueZ's
    /// prepared writes). GattCharacteristic1.WriteValue with `type: "request"`.
    case withResponse
    /// Write command, no confirmation; at most
    /// ``Peripheral/maximumWriteValueLength(for:)`` bytes. `type: "command"`
    /// (or the AcquireWrite socket).
    case withoutResponse
}

/// What a central backend reports, in bus order.
public enum CentralBackendEvent: Hashable, Sendable {
    /// The Bluetooth daemon started (true) or left (false).
    case bluetoothdPresent(Bool)
    /// The daemon refused a call: we lack the permission.
    case accessDenied
    /// The daemon's whole state, read again: its adapters, decoded by the
    /// backend, and the tree of its devices and their GATT objects (adapters
    /// are not in it), with the reply's serial when known.
    case snapshot(ObjectTreeSnapshot, adapters: [AdapterStatus], serial: UInt32?)
    /// A change to the tree of devices and GATT objects, with its serial when known.
    case delta(ObjectTreeDelta, serial: UInt32?)
    /// An adapter appeared, or its address or power changed, after (or
    /// while) the last snapshot was read. The backend orders these with the
    /// snapshots as it orders deltas: a snapshot's adapters already hold what
    /// an older event said.
    case adapterUpdated(AdapterStatus)
    /// The adapter with this ``AdapterStatus/id`` went away.
    case adapterRemoved(id: String)
    /// A notification or indication value read from an AcquireNotify socket
    /// (values that come as PropertiesChanged on `Value` arrive as ``delta(_:serial:)``).
    case notification(characteristicPath: String, value: [UInt8])
    /// Writes without response on the device at `devicePath` can (true) or
    /// cannot (false, the AcquireWrite socket is full) be sent.
    case writeWithoutResponseFlow(devicePath: String, canSend: Bool)
    /// bluetoothd called the advertisement monitor registered for `scan` (see ``CentralBackend/registerMonitor(adapter:scan:_:)``).
    case monitor(scan: UInt64, MonitorEvent)
}

/// Where a ``CentralBackend`` delivers its events: the manager, called
/// synchronously on the backend's own threads (the D-Bus connection's thread
/// for signals), with no buffer in between.
public struct CentralEventReceiver: Sendable {
    /// Applies one event. Quick and never blocking: it runs between the
    /// backend's reads, so its cost is the backpressure on the bus.
    public var receive: @Sendable (CentralBackendEvent) -> Void
    /// A run of events ended: consumers waiting for what it produced are woken
    /// now (once per run, not once per event).
    public var batchEnded: @Sendable () -> Void

    /// A receiver of events.
    public init(
        receive: @escaping @Sendable (CentralBackendEvent) -> Void, batchEnded: @escaping @Sendable () -> Void
    ) {
        self.receive = receive
        self.batchEnded = batchEnded
    }
}

/// What a backend (BlueZ over D-Bus, or a fake) implements for
/// ``CentralManager``. The backend decodes its daemon's adapters into
/// ``AdapterStatus`` values; devices and GATT objects come as a mirrored
/// object tree (``ObjectTreeSnapshot``, ``ObjectTreeDelta``). An adapter is
/// named in calls by its ``AdapterStatus/id``, a device or attribute by its
/// path in the tree. Every call maps one BlueZ method; failures are
/// ``BLEError``s built with ``BLEError/init(bluez:)`` so the BlueZ error name
/// is kept, and `org.bluez.Error.InProgress` must come back as code
/// ``BLEError/Code/inProgress`` (the operation queue retries it).
///
/// The backend subscribes to InterfacesAdded/InterfacesRemoved/
/// PropertiesChanged and NameOwnerChanged *before* calling GetManagedObjects,
/// and delivers everything to the receiver given to ``attach(_:)`` in the
/// order it was received.
public protocol CentralBackend: Sendable {
    /// Starts delivering events to `receiver` (called once, by the manager
    /// that owns the backend): `receive` for each event in order, never two
    /// at once, then `batchEnded` after each run of events. Of what happened
    /// before, only bluetoothd's presence is delivered (the manager then asks
    /// for a snapshot, which holds everything signalled earlier).
    func attach(_ receiver: CentralEventReceiver)
    /// Stops (true) or resumes (false) reading the notifications of
    /// `characteristic` while its consumers are behind: backpressure on an
    /// AcquireNotify socket. Transports that cannot pause (StartNotify values
    /// on the bus) ignore it.
    func setNotificationsPaused(_ paused: Bool, characteristic: String)
    /// Calls GetManagedObjects again; the reply comes as ``CentralBackendEvent/snapshot(_:serial:)``.
    func requestSnapshot() async throws(BLEError)
    /// Properties.GetAll on `interface` at `path`; the result comes as an
    /// InterfacesAdded delta (for objects the mirror pruned).
    func refresh(path: String, interface: String) async throws(BLEError)
    /// Sets the discovery filter of the adapter `adapter` (an ``AdapterStatus/id``): Adapter1.SetDiscoveryFilter.
    func setDiscoveryFilter(adapter: String, _ filter: DiscoveryFilter) async throws(BLEError)
    /// Starts discovery on the adapter `adapter` (an ``AdapterStatus/id``): Adapter1.StartDiscovery.
    func startDiscovery(adapter: String) async throws(BLEError)
    /// Stops discovery on the adapter `adapter` (an ``AdapterStatus/id``): Adapter1.StopDiscovery.
    func stopDiscovery(adapter: String) async throws(BLEError)
    /// Device1.Connect.
    func connect(device: String) async throws(BLEError)
    /// Device1.Disconnect.
    func disconnect(device: String) async throws(BLEError)
    /// GattCharacteristic1.ReadValue / GattDescriptor1.ReadValue with `offset`.
    func readValue(attribute: String, offset: Int) async throws(BLEError) -> [UInt8]
    /// GattCharacteristic1.WriteValue / GattDescriptor1.WriteValue (or the
    /// AcquireWrite socket for `.withoutResponse`, falling back to WriteValue).
    func writeValue(attribute: String, value: [UInt8], type: WriteType) async throws(BLEError)
    /// AcquireNotify, falling back to StartNotify.
    func startNotify(characteristic: String) async throws(BLEError)
    /// Closes the AcquireNotify socket or calls StopNotify.
    func stopNotify(characteristic: String) async throws(BLEError)
    /// Exports an `org.bluez.AdvertisementMonitor1` (type `or_patterns`) for the scan `scan`
    /// under the backend's monitor application on `adapter`, registering that application
    /// (AdvertisementMonitorManager1.RegisterMonitor) first if needed. bluetoothd's calls on the
    /// monitor come as ``CentralBackendEvent/monitor(scan:_:)``. Throws, with the reason in its
    /// message, when the adapter has no AdvertisementMonitorManager1, its SupportedMonitorTypes
    /// lacks `or_patterns`, or the registration fails.
    func registerMonitor(adapter: String, scan: UInt64, _ monitor: AdvertisementMonitor) async throws(BLEError)
    /// Withdraws the monitor of `scan`; the last one of an adapter also unregisters the
    /// application (UnregisterMonitor). Unknown scans do nothing.
    func unregisterMonitor(scan: UInt64) async
}

extension CentralBackend {
    /// A backend without advertisement monitors: every passive scan falls back to discovery.
    public func registerMonitor(adapter: String, scan: UInt64, _ monitor: AdvertisementMonitor) async throws(BLEError) {
        throw BLEError(.operationNotSupported, message: "this backend has no advertisement monitors")
    }

    /// Nothing to withdraw.
    public func unregisterMonitor(scan: UInt64) async {}
}
