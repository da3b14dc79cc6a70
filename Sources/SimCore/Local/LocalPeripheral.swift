import GATT

/// One GattService1 of a registered application, as read from its GetManagedObjects.
public struct LocalService: Sendable, Equatable {
    /// The service's object path in the application.
    public var path: String
    /// The service as a database (values are the application's; reads go to it).
    public var spec: GATTServiceSpec
    /// Each characteristic's object path, in `spec.characteristics` order.
    public var characteristicPaths: [String]
    /// Each characteristic's descriptors' object paths, in `spec...descriptors` order.
    public var descriptorPaths: [[String]]
    /// Paths of the characteristics that offer AcquireNotify (they have a `NotifyAcquired` property).
    public var acquireNotifyOffered: Set<String>
    /// Paths of the characteristics that offer AcquireWrite (they have a `WriteAcquired` property).
    public var acquireWriteOffered: Set<String>

    /// A service of an application.
    public init(
        path: String, spec: GATTServiceSpec, characteristicPaths: [String], descriptorPaths: [[String]],
        acquireNotifyOffered: Set<String> = [], acquireWriteOffered: Set<String> = []
    ) {
        self.path = path
        self.spec = spec
        self.characteristicPaths = characteristicPaths
        self.descriptorPaths = descriptorPaths
        self.acquireNotifyOffered = acquireNotifyOffered
        self.acquireWriteOffered = acquireWriteOffered
    }
}

/// A GATT application registered through GattManager1.RegisterApplication.
public struct LocalApplication: Sendable, Equatable {
    /// The bus name that registered it (calls go there).
    public var owner: String
    /// The object path it registered.
    public var path: String
    /// Its services, in the order bluetoothd adds them.
    public var services: [LocalService]

    /// An application of `owner` at `path`.
    public init(owner: String, path: String, services: [LocalService]) {
        self.owner = owner
        self.path = path
        self.services = services
    }
}

/// An advertisement registered through LEAdvertisingManager1.RegisterAdvertisement.
public struct LocalAdvertisement: Sendable, Equatable {
    /// The bus name that registered it.
    public var owner: String
    /// Its object path.
    public var path: String
    /// What goes on the air.
    public var advertisement: Advertisement
    /// "peripheral" (connectable) or "broadcast".
    public var connectable: Bool
    /// Seconds until bluetoothd removes it (Timeout), if set.
    public var timeout: Double?
    /// Sent in extended advertising PDUs (a `SecondaryChannel` the controller
    /// offers, checked by blesim's advertising manager against its length):
    /// exempt from the legacy 31 + 31-byte fit.
    public var extended: Bool

    /// An advertisement of `owner` at `path`.
    public init(
        owner: String, path: String, advertisement: Advertisement, connectable: Bool, timeout: Double? = nil,
        extended: Bool = false
    ) {
        self.owner = owner
        self.path = path
        self.advertisement = advertisement
        self.connectable = connectable
        self.timeout = timeout
        self.extended = extended
    }
}

/// Where an attribute of a local GATT database lives in its application.
public struct LocalAttribute: Sendable, Equatable {
    /// The application's bus name.
    public var owner: String
    /// The attribute's object path in the application.
    public var path: String
    /// Whether it is a characteristic (else a descriptor).
    public var isCharacteristic: Bool
    /// The application offers AcquireNotify on it: bluetoothd calls that instead of StartNotify.
    public var offersAcquireNotify = false
    /// The application offers AcquireWrite on it: bluetoothd writes through that socket.
    public var offersAcquireWrite = false
    /// Its value changes go out as indications (bluetoothd's client writes 0x0002 to the CCC of
    /// an indicate-only characteristic, 0x0001 when it can notify), so each confirmation is the
    /// application's `Confirm`.
    public var indicates = false

    /// An attribute of `owner` at `path`.
    public init(
        owner: String, path: String, isCharacteristic: Bool, offersAcquireNotify: Bool = false,
        offersAcquireWrite: Bool = false, indicates: Bool = false
    ) {
        self.owner = owner
        self.path = path
        self.isCharacteristic = isCharacteristic
        self.offersAcquireNotify = offersAcquireNotify
        self.offersAcquireWrite = offersAcquireWrite
        self.indicates = indicates
    }
}

/// An adapter's peripheral role: the device standing for it in the air, its applications and
/// its advertisement.
public struct LocalPeripheral: Sendable, Equatable {
    /// The index of the virtual device that is this adapter seen from the air.
    public let device: Int
    /// The registered applications, first registered first.
    public var applications: [LocalApplication] = []
    /// The registered advertisement (blesim offers one instance).
    public var advertisement: LocalAdvertisement?
    /// When the advertisement's Timeout expires.
    public var advertisementExpiry: SimInstant?
    /// Each handle's attribute in an application (characteristics by value handle).
    public internal(set) var attributes: [UInt16: LocalAttribute] = [:]

    /// The GATT database bluetoothd serves: its own services (``BluetoothdCoreServices``), then
    /// all applications', and the handle map of the applications' attributes, as bluetoothd
    /// assigns handles.
    func database() -> (GATTServer, [UInt16: LocalAttribute]) {
        let services = applications.flatMap { app in app.services.map { (app.owner, $0) } }
        let core = BluetoothdCoreServices.services
        let server = GATTServer(
            GATTDatabaseSpec(services: core + services.map(\.1.spec)),
            firstHandle: BluetoothdCoreServices.firstHandle)
        var map: [UInt16: LocalAttribute] = [:]
        for ((owner, local), service) in zip(services, server.services.dropFirst(core.count)) {
            for (index, chrc) in service.characteristics.enumerated() {
                let path = local.characteristicPaths[index]
                map[chrc.valueHandle] = LocalAttribute(
                    owner: owner, path: path, isCharacteristic: true,
                    offersAcquireNotify: local.acquireNotifyOffered.contains(path),
                    offersAcquireWrite: local.acquireWriteOffered.contains(path),
                    indicates: chrc.flags.properties.contains(.indicate) && !chrc.flags.properties.contains(.notify))
                let own = local.descriptorPaths[index]
                for (descriptor, path) in zip(chrc.descriptors.suffix(own.count), own) {
                    map[descriptor.handle] = LocalAttribute(owner: owner, path: path, isCharacteristic: false)
                }
            }
        }
        return (server, map)
    }
}
