import GATT

/// One fault, as `org.blesim.Control1` injects it and as a scenario's `faults` schedule it: both go
/// through `SimWorld.apply(_:)`, the single implementation.
public enum Fault: Sendable, Equatable {
    /// Every link of the device goes down (as a supervision timeout).
    case dropLink(DeviceAddress)
    /// The next operations on the device fail (a rule of the `FaultPlan`).
    case failNext(FaultPlan.Rule)
    /// The device's answers come this many seconds late (0 clears).
    case delay(DeviceAddress, seconds: Double)
    /// Forgets every FailNext rule and delay.
    case clear
    /// The device stops (true) or resumes (false) advertising; Connect to it fails while silenced.
    case silence(DeviceAddress, Bool)
    /// The device stands this many metres along x from now on.
    case move(DeviceAddress, distance: Double)
    /// Adapter hciN powers off (false) or on (true); a power cycle is both, in that order.
    case powered(adapter: Int, Bool)
    /// The device's next link comes up without a `Connected` PropertiesChanged; Get and GetAll
    /// show it connected. bluetoothd 5.66 does this when its ATT channel connects before the
    /// kernel's Device Connected event: `att_connect_cb` marks the LE bearer connected without
    /// emitting the property, and `device_add_connection` then logs "already connected" and
    /// returns (device.c), so only ServicesResolved is signalled. Seen in the VM.
    case unsignalledConnect(DeviceAddress)
}

extension SimWorld {
    /// Applies `fault` now. `applied` is false when it names a device or adapter the world does
    /// not have (nothing changes then).
    public mutating func apply(_ fault: Fault) -> (applied: Bool, batches: [Batch]) {
        switch fault {
        case .dropLink(let address):
            return (true, dropLinks(address))
        case .failNext(let rule):
            faults.rules.append(rule)
            return (true, [])
        case .delay(let address, let seconds):
            faults.delays[address] = seconds > 0 ? seconds : nil
            return (true, [])
        case .clear:
            faults = FaultPlan()
            return (true, [])
        case .silence(let address, let on):
            return (silence(address, on), [])
        case .move(let address, let distance):
            return (move(address, toDistance: distance), [])
        case .powered(let adapter, let on):
            guard adapters.indices.contains(adapter) else { return (false, []) }
            return (true, setPowered(adapter: adapter, on))
        case .unsignalledConnect(let address):
            guard deviceIndex(address) != nil else { return (false, []) }
            faults.unsignalledConnects.insert(address)
            return (true, [])
        }
    }
}
