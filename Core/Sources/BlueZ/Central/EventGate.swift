import BLE
import Synchronization

/// The one place where the central backend's events are put in order.
///
/// Signals, name-owner changes and GetManagedObjects replies reach the
/// backend on different tasks; this gate decides, under one lock, what is
/// yielded and in which order, so the mirror neither loses nor doubles:
///
/// - only signals and replies from the current owner of `org.bluez` pass
///   (a signal still queued from a bluetoothd that has exited, or one sent by
///   a new bluetoothd before we knew its name, is dropped: the next snapshot
///   holds what it said);
/// - once a snapshot with reply serial S is yielded, a signal with a serial
///   below S that arrives later is dropped (the snapshot already contains it;
///   bluetoothd numbers its replies and signals from one counter). Signals
///   yielded before the snapshot are buffered by ``ObjectTreeMirror`` and
///   filtered there by the same rule.
///
/// What passes goes to the manager's ``CentralEventReceiver`` under the
/// gate's lock (so in the order decided); until the manager attaches, only
/// bluetoothd's latest presence is kept. Also keeps which paths are GATT
/// descriptors, so ReadValue/WriteValue pick the right interface, and the
/// adapters (``BlueZAdapterTable``): what the manager gets of an Adapter1
/// is an ``AdapterStatus``, decoded here.
final class EventGate: Sendable {
    private struct State {
        var owner: String?
        var snapshotSerial: UInt32?
        var descriptors: Set<String> = []
        /// The adapters, decoded from the tree in the order events are yielded.
        var adapters = BlueZAdapterTable()
    }

    private struct Delivery {
        var receiver: CentralEventReceiver?
        var presenceBeforeAttach: Bool?
        var finished = false
    }

    private let state = Mutex(State())
    private let delivery = Mutex(Delivery())

    init() {}

    /// Starts delivering to `receiver`, first the presence seen so far.
    func attach(_ receiver: CentralEventReceiver) {
        state.withLock { _ in
            let pending = delivery.withLock { delivery -> Bool? in
                guard !delivery.finished, delivery.receiver == nil else { return nil }
                delivery.receiver = receiver
                defer { delivery.presenceBeforeAttach = nil }
                return delivery.presenceBeforeAttach
            }
            if let pending { receiver.receive(.bluetoothdPresent(pending)) }
        }
        receiver.batchEnded()
    }

    /// Hands `event` to the receiver (called under the state lock, so in order).
    private func deliver(_ event: CentralBackendEvent) {
        let receiver = delivery.withLock { delivery -> CentralEventReceiver? in
            if delivery.receiver == nil, !delivery.finished, case .bluetoothdPresent(let present) = event {
                delivery.presenceBeforeAttach = present
            }
            return delivery.receiver
        }
        receiver?.receive(event)
    }

    /// A run of events ended: the receiver wakes its consumers.
    func batchEnded() {
        delivery.withLock { $0.receiver }?.batchEnded()
    }

    /// The unique name of the current bluetoothd, if any.
    var owner: String? { state.withLock { $0.owner } }

    /// A name-owner observation: `oldOwner` → `newOwner` (nil for none), or,
    /// for the first look (GetNameOwner), `oldOwner` nil. Yields
    /// `bluetoothdPresent` only on real changes; stale observations (an old
    /// owner that is not the current one) are ignored. Returns whether
    /// bluetoothd was lost.
    @discardableResult
    func ownerChanged(from oldOwner: String?, to newOwner: String?) -> Bool {
        defer { batchEnded() }
        return state.withLock { state in
            var lost = false
            if let oldOwner, oldOwner == state.owner, newOwner != oldOwner {
                state = State()
                deliver(.bluetoothdPresent(false))
                lost = true
            }
            if let newOwner, newOwner != state.owner {
                if state.owner != nil {
                    state = State()
                    deliver(.bluetoothdPresent(false))
                    lost = true
                }
                state.owner = newOwner
                deliver(.bluetoothdPresent(true))
            }
            return lost
        }
    }

    /// Reports bluetoothd absent at start (GetNameOwner found no owner).
    func initiallyAbsent() {
        state.withLock { state in
            if state.owner == nil { deliver(.bluetoothdPresent(false)) }
        }
        batchEnded()
    }

    /// A tree signal from `sender` with D-Bus serial `serial`.
    func signal(_ delta: ObjectTreeDelta, sender: String?, serial: UInt32) {
        state.withLock { state in
            guard let owner = state.owner, sender == owner else { return }
            if let snapshotSerial = state.snapshotSerial, serial < snapshotSerial { return }
            Self.track(delta, in: &state.descriptors)
            state.adapters.signal(delta, serial: serial) { deliver($0) }
        }
    }

    /// A GetManagedObjects reply from `sender` with serial `serial`.
    func snapshot(_ tree: consuming ObjectTreeSnapshot, sender: String?, serial: UInt32) {
        var tree = tree
        state.withLock { state in
            guard let owner = state.owner, sender == owner else { return }
            state.snapshotSerial = serial
            state.descriptors = Set(tree.filter { $0.value[BlueZInterface.gattDescriptor] != nil }.keys)
            let adapters = state.adapters.snapshot(&tree, serial: serial)
            deliver(.snapshot(tree, adapters: adapters, serial: serial))
        }
        batchEnded()
    }

    /// A Properties.GetAll reply, fed as InterfacesAdded (no serial: it is a
    /// fresh read, newer than anything buffered).
    func refreshed(path: String, interface: String, properties: PropertyMap, sender: String?) {
        state.withLock { state in
            guard let owner = state.owner, sender == owner else { return }
            let delta = ObjectTreeDelta.interfacesAdded(path: path, interfaces: [interface: properties])
            Self.track(delta, in: &state.descriptors)
            state.adapters.signal(delta, serial: nil) { deliver($0) }
        }
        batchEnded()
    }

    /// Yields any other event (notifications, flow control, access denied);
    /// with `endBatch`, the receiver's batch ends with it.
    func yield(_ event: CentralBackendEvent, endBatch: Bool = true) {
        state.withLock { _ in deliver(event) }
        if endBatch { batchEnded() }
    }

    /// Whether `path` is a GattDescriptor1 (known from the tree, else by
    /// BlueZ's path scheme `.../charXXXX/descYYYY`).
    func isDescriptor(_ path: String) -> Bool {
        if state.withLock({ $0.descriptors.contains(path) }) { return true }
        return path.split(separator: "/").last?.hasPrefix("desc") ?? false
    }

    /// Stops delivering (the backend stopped).
    func finish() {
        delivery.withLock { delivery in
            delivery.finished = true
            delivery.receiver = nil
        }
    }

    private static func track(_ delta: ObjectTreeDelta, in descriptors: inout Set<String>) {
        switch delta {
        case .interfacesAdded(let path, let interfaces) where interfaces[BlueZInterface.gattDescriptor] != nil:
            descriptors.insert(path)
        case .interfacesRemoved(let path, let interfaces) where interfaces.contains(BlueZInterface.gattDescriptor):
            descriptors.remove(path)
        default: break
        }
    }
}
