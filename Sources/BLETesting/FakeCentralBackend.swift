import BLE
import BlueZ
import Synchronization

/// A scripted ``CentralBackend``: the test feeds events (``send(_:)``, ``sendSnapshot(_:serial:)``) as
/// bluetoothd would, each delivered at once and followed by the end of a batch (held until the manager
/// attaches), and decides how each GATT call ends (``answers``, or parked until ``finish(_:with:)``); every call
/// is recorded and announced on ``calls``. A plugin's central logic is tested over it without a bus, a
/// simulator or a process. Like ``BlueZCentralBackend``, it decodes BlueZ's adapters (``BlueZAdapterTable``):
/// the Adapter1 objects of a tree or a delta it is fed reach the manager as ``AdapterStatus`` values.
public final class FakeCentralBackend: CentralBackend {
    /// A call the manager made, with the object path it named.
    public enum Call: Hashable, Sendable {
        case requestSnapshot
        case refresh(String)
        case setDiscoveryFilter(DiscoveryFilter)
        case startDiscovery
        case stopDiscovery
        case connect(String)
        case disconnect(String)
        case read(String)
        case write(String, [UInt8], WriteType)
        case startNotify(String)
        case stopNotify(String)
        case pauseNotifications(String, Bool)
        /// An advertisement monitor registered for scan `scan` on `adapter`.
        case registerMonitor(adapter: String, scan: UInt64)
        case unregisterMonitor(scan: UInt64)
    }

    private let delivery = Mutex<
        (receiver: CentralEventReceiver?, held: [CentralBackendEvent], adapters: BlueZAdapterTable)
    >((nil, [], BlueZAdapterTable()))
    /// Every call, in order, as it is made.
    public let calls: AsyncStream<Call>
    private let callSink: AsyncStream<Call>.Continuation
    private let state = Mutex<
        (log: [Call], parked: [Int: CheckedContinuation<Result<[UInt8], BLEError>, Never>], next: Int)
    >(
        ([], [:], 0))
    /// How reads and writes end: nil parks the call until ``finish(_:with:)``.
    public let answers = Mutex<[Result<[UInt8], BLEError>]>([])

    /// A backend with no events and no answers scripted yet.
    public init() {
        (calls, callSink) = AsyncStream.makeStream()
    }

    /// Every call so far, in order.
    public var log: [Call] { state.withLock { $0.log } }

    /// Takes the manager's receiver and hands it the events sent before.
    public func attach(_ receiver: CentralEventReceiver) {
        delivery.withLock { delivery in
            delivery.receiver = receiver
            for event in delivery.held { receiver.receive(event) }
            delivery.held = []
        }
        receiver.batchEnded()
    }

    /// Delivers `event` (one at a time, in call order) and ends the batch. A delta is BlueZ's: its Adapter1
    /// part becomes ``CentralBackendEvent/adapterUpdated(_:)`` or ``CentralBackendEvent/adapterRemoved(id:)``,
    /// as ``BlueZCentralBackend`` sends it.
    public func send(_ event: CentralBackendEvent) {
        let receiver = delivery.withLock { delivery -> CentralEventReceiver? in
            var events: [CentralBackendEvent] = []
            switch event {
            case .delta(let delta, let serial): delivery.adapters.signal(delta, serial: serial) { events.append($0) }
            case .bluetoothdPresent:
                delivery.adapters.reset()
                events = [event]
            default: events = [event]
            }
            guard let receiver = delivery.receiver else {
                delivery.held += events
                return nil
            }
            for event in events { receiver.receive(event) }
            return receiver
        }
        receiver?.batchEnded()
    }

    /// Delivers a GetManagedObjects reply holding BlueZ's `tree` (adapters included, as Adapter1 objects) the
    /// way ``BlueZCentralBackend`` does: the adapters decoded, the rest of the tree as it is.
    public func sendSnapshot(_ tree: ObjectTreeSnapshot, serial: UInt32? = nil) {
        var tree = tree
        let adapters = delivery.withLock { $0.adapters.snapshot(&tree, serial: serial) }
        send(.snapshot(tree, adapters: adapters, serial: serial))
    }

    /// Records ``Call/pauseNotifications(_:_:)``.
    public func setNotificationsPaused(_ paused: Bool, characteristic: String) {
        record(.pauseNotifications(characteristic, paused))
    }

    /// Resumes the parked call number `index` (0-based among parked calls).
    public func finish(_ index: Int, with result: Result<[UInt8], BLEError>) {
        let continuation = state.withLock { $0.parked.removeValue(forKey: index) }
        continuation?.resume(returning: result)
    }

    private func record(_ call: Call) {
        state.withLock { $0.log.append(call) }
        callSink.yield(call)
    }

    private func gattCall(_ call: Call) async throws(BLEError) -> [UInt8] {
        let scripted = answers.withLock { $0.isEmpty ? nil : $0.removeFirst() }
        if let scripted {
            record(call)
            return try scripted.get()
        }
        let result = await withCheckedContinuation { continuation in
            state.withLock { state in
                state.parked[state.next] = continuation
                state.next += 1
            }
            // Parked before it is seen: a test that sees the call and finishes it at once must find it.
            record(call)
        }
        return try result.get()
    }

    /// What GetManagedObjects answers; nil: it fails (the manager then goes by
    /// the signals alone).
    public let snapshotReply = Mutex<ObjectTreeSnapshot?>(nil)

    /// Records ``Call/requestSnapshot`` and sends ``snapshotReply`` (or fails without one).
    public func requestSnapshot() async throws(BLEError) {
        record(.requestSnapshot)
        guard let tree = snapshotReply.withLock({ $0 }) else {
            throw BLEError(.failed, message: "no snapshot scripted")
        }
        sendSnapshot(tree)
    }
    /// When true, refreshes park like reads (ended by ``finish(_:with:)``).
    public let parkRefreshes = Mutex(false)

    /// The remaining calls are recorded; reads and writes end as ``answers`` says.
    public func refresh(path: String, interface: String) async throws(BLEError) {
        if parkRefreshes.withLock({ $0 }) {
            _ = try await gattCall(.refresh(path))
        } else {
            record(.refresh(path))
        }
    }
    public func setDiscoveryFilter(adapter: String, _ filter: DiscoveryFilter) async throws(BLEError) {
        record(.setDiscoveryFilter(filter))
    }
    public func startDiscovery(adapter: String) async throws(BLEError) { record(.startDiscovery) }
    public func stopDiscovery(adapter: String) async throws(BLEError) { record(.stopDiscovery) }
    public func connect(device: String) async throws(BLEError) { record(.connect(device)) }
    public func disconnect(device: String) async throws(BLEError) { record(.disconnect(device)) }
    public func readValue(attribute: String, offset: Int) async throws(BLEError) -> [UInt8] {
        try await gattCall(.read(attribute))
    }
    public func writeValue(attribute: String, value: [UInt8], type: WriteType) async throws(BLEError) {
        _ = try await gattCall(.write(attribute, value, type))
    }
    /// When true, StartNotify calls park like reads (ended by ``finish(_:with:)``).
    public let parkStartNotify = Mutex(false)

    public func startNotify(characteristic: String) async throws(BLEError) {
        if parkStartNotify.withLock({ $0 }) {
            _ = try await gattCall(.startNotify(characteristic))
        } else {
            record(.startNotify(characteristic))
        }
    }
    public func stopNotify(characteristic: String) async throws(BLEError) { record(.stopNotify(characteristic)) }

    /// Records the registration; fails it with the first of ``monitorRefusals`` when any is left.
    public func registerMonitor(adapter: String, scan: UInt64, _ monitor: AdvertisementMonitor) async throws(BLEError) {
        record(.registerMonitor(adapter: adapter, scan: scan))
        if let refusal = monitorRefusals.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) { throw refusal }
    }

    /// How the next monitor registrations fail, in order (empty: they succeed).
    public let monitorRefusals = Mutex<[BLEError]>([])

    public func unregisterMonitor(scan: UInt64) async { record(.unregisterMonitor(scan: scan)) }
}

/// A small BlueZ tree for ``FakeCentralBackend``: adapter hci0 with one heart-rate sensor (feed it with
/// ``FakeCentralBackend/sendSnapshot(_:serial:)``).
public enum FakeTree {
    public static let adapter = "/org/bluez/hci0"
    public static let device = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF"
    public static let service = device + "/service000a"
    public static let measurement = service + "/char000b"
    public static let bodySensor = service + "/char000e"
    public static let identifier = PeripheralIdentifier(
        adapter: "00:11:22:33:44:55", address: "AA:BB:CC:DD:EE:FF", addressType: .random)

    /// The tree as GetManagedObjects answers it.
    public static func snapshot(
        powered: Bool = true, connected: Bool = false, resolved: Bool = false
    ) -> ObjectTreeSnapshot {
        [
            adapter: [BlueZInterface.adapter: ["Address": .string("00:11:22:33:44:55"), "Powered": .bool(powered)]],
            device: [
                BlueZInterface.device: [
                    "Address": .string("AA:BB:CC:DD:EE:FF"), "AddressType": .string("random"),
                    "Adapter": .objectPath(adapter), "Name": .string("HR Sensor"), "RSSI": .int(-50),
                    "UUIDs": .array([.string("0000180d-0000-1000-8000-00805f9b34fb")]),
                    "Connected": .bool(connected), "ServicesResolved": .bool(resolved),
                ]
            ],
            service: [
                BlueZInterface.gattService: [
                    "UUID": .string("0000180d-0000-1000-8000-00805f9b34fb"), "Device": .objectPath(device),
                    "Primary": .bool(true),
                ]
            ],
            measurement: [
                BlueZInterface.gattCharacteristic: [
                    "UUID": .string("00002a37-0000-1000-8000-00805f9b34fb"), "Service": .objectPath(service),
                    "Flags": .array([.string("notify")]), "Notifying": .bool(false),
                ]
            ],
            bodySensor: [
                BlueZInterface.gattCharacteristic: [
                    "UUID": .string("00002a38-0000-1000-8000-00805f9b34fb"), "Service": .objectPath(service),
                    "Flags": .array([.string("read"), .string("write-without-response")]), "MTU": .uint(23),
                ]
            ],
        ]
    }

    /// A PropertiesChanged of the sensor's Device1.
    public static func deviceChanged(_ changed: PropertyMap) -> CentralBackendEvent {
        .delta(
            .propertiesChanged(path: device, interface: BlueZInterface.device, changed: changed, invalidated: []),
            serial: nil)
    }
}
