/// A D-Bus property value as SimCore produces it, without depending on a D-Bus library; the
/// shell turns each case into the variant of the signature named in its doc comment.
public enum PropertyValue: Sendable, Equatable {
    /// `b`
    case bool(Bool)
    /// `y`
    case byte(UInt8)
    /// `s`
    case string(String)
    /// `o`
    case objectPath(String)
    /// `n`
    case int16(Int16)
    /// `q`
    case uint16(UInt16)
    /// `u`
    case uint32(UInt32)
    /// `as`
    case strings([String])
    /// `ao`
    case objectPaths([String])
    /// `ay`
    case bytes([UInt8])
    /// `a{qv}` with `ay` values (Device1.ManufacturerData)
    case manufacturerData([ManufacturerDatum])
    /// `a{sv}` with `ay` values (Device1.ServiceData)
    case serviceData([ServiceDatum])
}

/// A named property value of an org.bluez interface.
public struct Property: Sendable, Equatable, CustomStringConvertible {
    /// The property name, for example `RSSI`.
    public let name: String
    /// Its value.
    public let value: PropertyValue

    /// A property.
    public init(_ name: String, _ value: PropertyValue) {
        self.name = name
        self.value = value
    }

    public var description: String { "\(name)=\(value)" }
}

/// What changed on an adapter's object tree, for the shell to emit as D-Bus signals, in order.
public enum AdapterEvent: Sendable, Equatable {
    /// Adapter1 properties changed (PropertiesChanged on the adapter).
    case adapterChanged([Property])
    /// A Device1 object appeared (InterfacesAdded with all its present properties).
    case deviceAdded(DeviceAddress, [Property])
    /// Device1 properties changed or were invalidated (PropertiesChanged).
    case deviceChanged(DeviceAddress, changed: [Property], invalidated: [String])
    /// Not a signal: Device1 properties changed without PropertiesChanged (Get, GetAll and
    /// GetManagedObjects show them; see `Fault.unsignalledConnect`).
    case deviceChangedSilently(DeviceAddress, changed: [Property])
    /// A Device1 object went away (InterfacesRemoved).
    case deviceRemoved(DeviceAddress)
    /// Another object appeared under the adapter (a GATT object of a connected device).
    case objectAdded(path: String, interface: String, properties: [Property])
    /// Properties of another object changed.
    case objectChanged(path: String, interface: String, changed: [Property], invalidated: [String])
    /// Another object went away.
    case objectRemoved(path: String, interfaces: [String])
    /// A notification for a client that acquired the characteristic at `path` with AcquireNotify:
    /// written to its socket, not signalled.
    case socketNotification(path: String, value: [UInt8])
    /// Not a signal: bluetoothd removed the advertisement `owner` registered at `path` (timeout,
    /// power off), so it calls the advertisement's Release.
    case advertisementReleased(owner: String, path: String)
    /// Not a signal: the last central subscribed to the application characteristic `path` of
    /// `owner` went away with its link (bluetoothd clears an unbonded device's CCC state on
    /// disconnect), so the application is told to stop (StopNotify, or its AcquireNotify socket
    /// closed).
    case applicationUnsubscribed(owner: String, path: String)
    /// Not a signal: an advertisement of `device` matched the monitor `owner` registered at
    /// `monitor`, so bluetoothd calls its DeviceFound.
    case monitorDeviceFound(owner: String, monitor: String, device: DeviceAddress)
    /// Not a signal: `device`, found by the monitor `owner` registered at `monitor` under its RSSI
    /// thresholds, stayed below the low threshold or went unheard, so bluetoothd calls its DeviceLost.
    case monitorDeviceLost(owner: String, monitor: String, device: DeviceAddress)
}
