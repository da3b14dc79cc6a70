/// A GATT service: a description of a local (peripheral) service to publish or
/// of a remote one that was discovered. Plain value; nothing here does I/O.
public struct GATTService: Hashable, Sendable {
    /// The service type.
    public var uuid: BluetoothUUID
    /// Primary (true) or secondary (false) service (BlueZ GattService1.Primary).
    public var isPrimary: Bool
    /// The services this one includes (BlueZ GattService1.Includes).
    public var includedServices: [GATTIncludedService]
    /// The service's characteristics, in handle order.
    public var characteristics: [GATTCharacteristic]
    /// The service declaration handle, when known (BlueZ GattService1.Handle
    /// for a local service; nil asks the server to allocate one).
    public var handle: UInt16?

    /// A service with the given contents.
    public init(
        uuid: BluetoothUUID, isPrimary: Bool = true, includedServices: [GATTIncludedService] = [],
        characteristics: [GATTCharacteristic] = [], handle: UInt16? = nil
    ) {
        self.uuid = uuid
        self.isPrimary = isPrimary
        self.includedServices = includedServices
        self.characteristics = characteristics
        self.handle = handle
    }

    /// The first characteristic of type `uuid`, or nil.
    public func characteristic(_ uuid: BluetoothUUID) -> GATTCharacteristic? {
        characteristics.first { $0.uuid == uuid }
    }
}

/// A reference from a service to a service it includes.
public struct GATTIncludedService: Hashable, Sendable {
    /// The included service's type.
    public var uuid: BluetoothUUID
    /// The included service's declaration handle, when known; tells apart two
    /// included services of the same type.
    public var handle: UInt16?

    /// A reference to the included service `uuid` (at `handle`, when known).
    public init(uuid: BluetoothUUID, handle: UInt16? = nil) {
        self.uuid = uuid
        self.handle = handle
    }
}

/// A GATT characteristic, local or remote.
public struct GATTCharacteristic: Hashable, Sendable {
    /// The characteristic type.
    public var uuid: BluetoothUUID
    /// What a client may do with the value (declared over the air).
    public var properties: CharacteristicProperties
    /// Reliable write and writable auxiliaries (descriptor 0x2900).
    public var extendedProperties: CharacteristicExtendedProperties
    /// Who may read and write the value, over what security (enforced by the
    /// server, never sent over the air).
    public var permissions: AttributePermissions
    /// Security needed to write this characteristic's Client Characteristic
    /// Configuration descriptor, i.e. to subscribe: only the write-security
    /// members count (BlueZ "encrypt-notify", "encrypt-authenticated-indicate",
    /// "secure-notify", ...).
    public var subscriptionPermissions: AttributePermissions
    /// The value: for a local characteristic a fixed value (nil: produced on
    /// each read); for a remote one the last value read or notified (BlueZ
    /// GattCharacteristic1.Value), nil when none is cached.
    public var value: [UInt8]?
    /// The characteristic's descriptors, in handle order.
    public var descriptors: [GATTDescriptor]
    /// The characteristic declaration handle, when known (the `charXXXX` of a
    /// BlueZ object path; GattCharacteristic1.Handle for a local one).
    public var handle: UInt16?
    /// The value handle, when known (usually ``handle`` + 1).
    public var valueHandle: UInt16?

    /// A characteristic with the given contents. Unless given, `permissions`
    /// are those the properties imply (see
    /// ``AttributePermissions/implied(by:extendedProperties:)``).
    public init(
        uuid: BluetoothUUID, properties: CharacteristicProperties,
        extendedProperties: CharacteristicExtendedProperties = [], permissions: AttributePermissions? = nil,
        subscriptionPermissions: AttributePermissions = [], value: [UInt8]? = nil,
        descriptors: [GATTDescriptor] = [], handle: UInt16? = nil, valueHandle: UInt16? = nil
    ) {
        self.uuid = uuid
        self.properties = properties
        self.extendedProperties = extendedProperties
        self.permissions =
            permissions ?? .implied(by: properties, extendedProperties: extendedProperties)
        self.subscriptionPermissions = subscriptionPermissions
        self.value = value
        self.descriptors = descriptors
        self.handle = handle
        self.valueHandle = valueHandle
    }

    /// The first descriptor of type `uuid`, or nil.
    public func descriptor(_ uuid: BluetoothUUID) -> GATTDescriptor? {
        descriptors.first { $0.uuid == uuid }
    }

    /// Whether a client can subscribe (notify or indicate).
    public var canSubscribe: Bool {
        !properties.isDisjoint(with: [.notify, .indicate])
    }
}

/// A GATT characteristic descriptor, local or remote.
public struct GATTDescriptor: Hashable, Sendable {
    /// The descriptor type.
    public var uuid: BluetoothUUID
    /// Who may read and write the value, over what security.
    public var permissions: AttributePermissions
    /// The value: fixed for a local descriptor (nil: produced on each read);
    /// the cached value of a remote one (BlueZ GattDescriptor1.Value).
    public var value: [UInt8]?
    /// The descriptor handle, when known.
    public var handle: UInt16?

    /// A descriptor with the given contents; readable only unless told.
    public init(
        uuid: BluetoothUUID, permissions: AttributePermissions = .readable, value: [UInt8]? = nil,
        handle: UInt16? = nil
    ) {
        self.uuid = uuid
        self.permissions = permissions
        self.value = value
        self.handle = handle
    }
}

extension AttributePermissions {
    /// The access the properties grant, as bluetoothd derives it:
    /// `read` gives ``readable``; `write`, `writeWithoutResponse`,
    /// `authenticatedSignedWrites` and the reliable-write extended property give
    /// ``writeable``.
    public static func implied(
        by properties: CharacteristicProperties, extendedProperties: CharacteristicExtendedProperties = []
    ) -> AttributePermissions {
        var permissions: AttributePermissions = []
        if properties.contains(.read) { permissions.insert(.readable) }
        if !properties.isDisjoint(with: [.write, .writeWithoutResponse, .authenticatedSignedWrites])
            || extendedProperties.contains(.reliableWrite)
        {
            permissions.insert(.writeable)
        }
        return permissions
    }
}
