import GATT

/// Names a characteristic of the local GATT application: the service's and
/// the characteristic's UUIDs and which of equal ones (0 for the first in the
/// order they were added).
public struct LocalCharacteristic: Hashable, Sendable, CustomStringConvertible {
    /// The service's UUID.
    public var service: BluetoothUUID
    /// The characteristic's UUID.
    public var uuid: BluetoothUUID
    /// Which of several characteristics with these UUIDs.
    public var instance: Int

    /// The characteristic `uuid` of service `service`.
    public init(service: BluetoothUUID, uuid: BluetoothUUID, instance: Int = 0) {
        self.service = service
        self.uuid = uuid
        self.instance = instance
    }

    /// `service/characteristic#instance`.
    public var description: String { "\(service.shortString)/\(uuid.shortString)#\(instance)" }
}

/// Identifies one request bluetoothd sent to the local application (one
/// pending D-Bus method call the backend must answer).
public struct ATTRequestID: Hashable, Sendable {
    /// The backend's number for it.
    public var rawValue: UInt64
    /// The request numbered `rawValue`.
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }
}

/// A request as the backend reports it (from GattCharacteristic1.ReadValue
/// or WriteValue called on our exported objects by bluetoothd, and from
/// AcquireWrite sockets).
public struct ATTRequestInfo: Hashable, Sendable {
    /// The request's id, for ``PeripheralBackend/respond(to:with:)``.
    public var id: ATTRequestID
    /// The central (from the `device` option, see ``PeripheralIdentifier``).
    public var central: PeripheralIdentifier
    /// The characteristic.
    public var characteristic: LocalCharacteristic
    /// The `offset` option.
    public var offset: Int
    /// The written value; empty for a read.
    public var value: [UInt8]
    /// Whether it is a write, and which kind.
    public var write: WriteType?
    /// The `mtu` option, when given.
    public var mtu: ATTMTU?

    /// A request with the given fields.
    public init(
        id: ATTRequestID, central: PeripheralIdentifier, characteristic: LocalCharacteristic, offset: Int = 0,
        value: [UInt8] = [], write: WriteType? = nil, mtu: ATTMTU? = nil
    ) {
        self.id = id
        self.central = central
        self.characteristic = characteristic
        self.offset = offset
        self.value = value
        self.write = write
        self.mtu = mtu
    }
}

/// What a peripheral backend reports.
public enum PeripheralBackendEvent: Hashable, Sendable {
    /// The Bluetooth daemon started (true) or left (false).
    case bluetoothdPresent(Bool)
    /// The daemon refused a call: we lack the permission.
    case accessDenied
    /// The adapters after (re)reading the daemon's state, decoded by the backend.
    case adapters([AdapterStatus])
    /// An adapter appeared or changed.
    case adapterUpdated(AdapterStatus)
    /// The adapter with this ``AdapterStatus/id`` went away.
    case adapterRemoved(id: String)
    /// A read or write request to answer.
    case request(ATTRequestInfo)
    /// A central subscribed (StartNotify or AcquireNotify on our characteristic).
    case subscribed(central: PeripheralIdentifier, characteristic: LocalCharacteristic, mtu: ATTMTU)
    /// A central unsubscribed (StopNotify, socket closed, disconnect).
    case unsubscribed(central: PeripheralIdentifier, characteristic: LocalCharacteristic)
    /// The notification queue drained: updates can be sent again.
    case readyToUpdate
    /// bluetoothd released our advertisement (LEAdvertisement1.Release).
    case advertisementReleased
}

/// What the BlueZ backend implements for ``PeripheralManager``: one GATT
/// application object tree (GattManager1.RegisterApplication, registered
/// again whole on every change), one advertisement
/// (LEAdvertisingManager1.RegisterAdvertisement), answers to requests, and
/// notifications. Exported objects must answer only bluetoothd's unique bus
/// name (others get org.freedesktop.DBus.Error.AccessDenied).
public protocol PeripheralBackend: Sendable {
    /// The event stream; consumed by one manager.
    var events: AsyncStream<PeripheralBackendEvent> { get }
    /// Exports `services` and registers (or re-registers) the application;
    /// an empty list unregisters it.
    func setApplication(adapter: String, services: [GATTService]) async throws(BLEError)
    /// Exports and registers the advertisement (`extended`: use extended
    /// advertising, the adapter supports it).
    func registerAdvertisement(adapter: String, _ advertisement: AdvertisingData, extended: Bool) async throws(BLEError)
    /// Unregisters the advertisement and removes its object.
    func unregisterAdvertisement(adapter: String) async throws(BLEError)
    /// What `adapter` offers for advertising (legacy only by default).
    func advertisingCapabilities(adapter: String) async throws(BLEError) -> AdvertisingCapabilities
    /// Answers request `id`: a value for a read, empty for a write, or an ATT
    /// error (sent as the BlueZ error from ``BlueZATTErrorMapping/applicationError(for:access:)``).
    func respond(to id: ATTRequestID, with result: Result<[UInt8], ATTError>)
    /// Sends `value` as a notification or indication of `characteristic` to
    /// `centrals` (nil: every subscriber). False when the transmit queue is
    /// full; ``PeripheralBackendEvent/readyToUpdate`` follows when it drains.
    func updateValue(
        _ value: [UInt8], for characteristic: LocalCharacteristic, centrals: [PeripheralIdentifier]?
    ) -> Bool
}
