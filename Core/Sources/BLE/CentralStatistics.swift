/// What a ``CentralManager`` has handled and what its bounds cost, for
/// monitoring (``CentralManager/statistics``): each queue, table and stream
/// with its bound, its overflow policy's counter and what waits now.
public struct CentralStatistics: Hashable, Sendable {
    /// Events the backend delivered (signals, replies, notifications).
    public var events = 0
    /// Advertisement reports: signals that carried a device's advertising
    /// data (an InterfacesAdded or a PropertiesChanged of Device1 with RSSI,
    /// data, UUIDs, name or TX power) for a device of the manager's adapter.
    public var advertisementReports = 0
    /// Devices of other adapters whose signals were ignored (adapter scoping).
    public var otherAdapterReports = 0
    /// The mirrored tree.
    public var mirror = Mirror()
    /// Properties.GetAll refreshes of objects the mirror had pruned.
    public var refreshes = RefreshQueue.Counters()
    /// The running scans' queues, merged (``DiscoveryStream``).
    public var scans = QueueCounters()
    /// How many scans are running.
    public var scanCount = 0
    /// Devices that passive scans' advertisement monitors found (each DeviceFound of a device the
    /// scan did not hold as found: the first, and the first after each DeviceLost).
    public var monitorDevicesFound = 0
    /// Devices that passive scans' advertisement monitors lost (each DeviceLost of a device the scan
    /// held as found; bluetoothd calls it only for monitors with RSSI thresholds).
    public var monitorDevicesLost = 0
    /// Passive scans that fell back to active discovery (no monitor, refused or released).
    public var monitorFallbacks = 0
    /// The notification streams' queues, merged (``NotificationStream``).
    public var notifications = QueueCounters()
    /// Values of wanted subscriptions that arrived while none of their streams
    /// was open, held for the next stream (delivered: handed to one; dropped:
    /// past the capacity or the subscription ended).
    public var heldNotifications = QueueCounters()
    /// How many notification streams are open.
    public var notificationStreams = 0
    /// How many times an AcquireNotify socket was paused because a consumer fell behind.
    public var notificationPauses = 0
    /// Values dropped from the other streams' subscribers (state, connection
    /// events, tree changes, flow, subscription changes), by stream.
    public var streamDrops: [String: Int] = [:]

    /// The mirrored tree's size and bounds.
    public struct Mirror: Hashable, Sendable {
        /// Objects (paths) mirrored.
        public var objects = 0
        /// Devices mirrored (any adapter).
        public var devices = 0
        /// Of those, unconnected and unpaired (subject to expiry and the maximum).
        public var prunableDevices = 0
        /// The bounds.
        public var limits = ObjectTreeMirror.Limits()
        /// What was dropped to stay within them.
        public var counters = ObjectTreeMirror.Counters()
    }

    /// Empty statistics.
    public init() {}
}
