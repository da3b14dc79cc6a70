import GATT

/// A connection from an adapter to a virtual device, with bluetoothd's client-side GATT state
/// for it (gatt-client.c): the cached values, the operation in flight per attribute, and the
/// notification sessions per client.
public struct GATTLink: Sendable {
    /// The virtual device's index in the world.
    public let device: Int
    /// Whether the link is up (false once disconnected; the GATT objects stay, as bluetoothd
    /// keeps its cache).
    public var connected = true
    /// Counts the link's connections: an operation started on one connection is answered only on
    /// that one (one that was in flight when the link dropped never lands on the next).
    public var generation = 0
    /// Whether services were resolved on this link.
    public var resolved = false
    /// The ATT MTU.
    public var mtu: UInt16
    /// bluetoothd's cached values, by handle (Value properties).
    public var cache: [UInt16: [UInt8]] = [:]
    /// Reads in flight by handle, with their offset.
    public var reads: [UInt16: Int] = [:]
    /// Writes in flight, by handle.
    public var writes: Set<UInt16> = []
    /// StartNotify sessions by value handle: the bus names, first first.
    public var notifyClients: [UInt16: [String]] = [:]
    /// AcquireNotify sessions by value handle: the owner.
    public var notifyAcquired: [UInt16: String] = [:]
    /// AcquireWrite sessions, by value handle.
    public var writeAcquired: Set<UInt16> = []
    /// The link model's budget for notifications and write commands (nil without a link model).
    public var budget: LinkBudget?
    /// Write commands on their way to the device under the link model.
    public var pacedWrites = PacedWrites()

    /// A new link to device `device` with `mtu`.
    public init(device: Int, mtu: UInt16) {
        self.device = device
        self.mtu = mtu
    }

    /// The Battery Level value handle whose percentage bluetoothd's battery plugin shows as
    /// `Battery1` on the device (registered after services were resolved).
    public var battery: UInt16?
    /// The battery plugin's own subscription to Battery Level (it wrote the CCC).
    public var batterySubscribed = false
    /// The percentage `Battery1` shows.
    public var batteryPercentage: UInt8?

    /// `Notifying`: some client has a StartNotify session.
    public func isNotifying(_ valueHandle: UInt16) -> Bool { !(notifyClients[valueHandle] ?? []).isEmpty }

    /// Whether the link has the peer's CCC of `valueHandle` written on: a StartNotify session,
    /// an AcquireNotify socket or the battery plugin.
    public func isSubscribed(_ valueHandle: UInt16) -> Bool {
        isNotifying(valueHandle) || notifyAcquired[valueHandle] != nil
            || (batterySubscribed && battery == valueHandle)
    }
}

/// What a client asked of a remote attribute.
public enum GATTRequest: Sendable, Equatable {
    /// ReadValue from an offset.
    case read(offset: Int)
    /// WriteValue at an offset, with the procedure bluetoothd chose.
    case write([UInt8], offset: Int, procedure: WriteProcedure)
}

/// The ATT procedure bluetoothd uses for a WriteValue (gatt-client.c's choice).
public enum WriteProcedure: String, Sendable, Equatable {
    /// Write Request (or a long write when the value does not fit the MTU or has an offset).
    case request
    /// Reliable (long) write.
    case reliable
    /// Write Command: replied to at once, no answer from the peer.
    case command
}

/// A GATT operation admitted by the world, for the shell to complete after `delay`.
public struct GATTOperation: Sendable, Equatable {
    /// The adapter.
    public let adapter: Int
    /// The device.
    public let address: DeviceAddress
    /// The attribute handle.
    public let handle: UInt16
    /// Whether `handle` is a characteristic value (else a descriptor).
    public let isCharacteristic: Bool
    /// What to do.
    public let request: GATTRequest
    /// Seconds before the peer answers (injected delay).
    public let delay: Double
    /// An injected fault: never answer (the client times out).
    public let timesOut: Bool
    /// An injected fault: answer with this error.
    public let injectedError: BlueZError?
    /// The ``GATTLink/generation`` of the connection it was started on.
    public var generation = 0
}
