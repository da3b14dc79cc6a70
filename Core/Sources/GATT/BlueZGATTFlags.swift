/// The one place where BlueZ's "Flags" strings (doc/gatt-api.txt,
/// GattCharacteristic1.Flags and GattDescriptor1.Flags) meet the attribute
/// model: properties, extended properties, permissions and subscription
/// permissions.
///
/// Parsing follows bluetoothd 5.66 (src/gatt-database.c, `parse_chrc_flags`
/// and `parse_desc_flags`): each flag adds bits, e.g. "encrypt-read" adds the
/// read property, ``AttributePermissions/readable`` and
/// ``AttributePermissions/readEncryptionRequired``; any reliable-write or
/// writable-auxiliaries flag also adds the extended-properties property.
/// bluetoothd refuses an application whose flags it does not know; here
/// unknown flags are returned (``Characteristic/unknownFlags``) for the caller
/// to report or reject with ``Characteristic/requireKnown()``.
///
/// Producing flags picks, for each capability, the most specific flags:
/// "encrypt-read" rather than "read" plus "encrypt-read". Remote
/// characteristics only ever carry the eight property names and the two
/// extended ones (src/gatt-client.c, `characteristic_get_flags`), which parse
/// and print back unchanged.
public enum BlueZGATTFlags {
    /// What a GattCharacteristic1 "Flags" list means.
    public struct Characteristic: Hashable, Sendable {
        /// The declared properties.
        public var properties: CharacteristicProperties
        /// Reliable write and writable auxiliaries.
        public var extendedProperties: CharacteristicExtendedProperties
        /// Access to the value and its security.
        public var permissions: AttributePermissions
        /// Write security of the Client Characteristic Configuration descriptor
        /// ("encrypt-notify", "secure-indicate", ...).
        public var subscriptionPermissions: AttributePermissions
        /// Flags this table does not know, in the order given.
        public var unknownFlags: [String]

        /// Flags with the given meaning.
        public init(
            properties: CharacteristicProperties, extendedProperties: CharacteristicExtendedProperties = [],
            permissions: AttributePermissions? = nil, subscriptionPermissions: AttributePermissions = [],
            unknownFlags: [String] = []
        ) {
            self.properties = properties
            self.extendedProperties = extendedProperties
            self.permissions =
                permissions ?? .implied(by: properties, extendedProperties: extendedProperties)
            self.subscriptionPermissions = subscriptionPermissions
            self.unknownFlags = unknownFlags
        }

        /// Parses a GattCharacteristic1 "Flags" list; duplicates are harmless.
        public init(bluezFlags flags: [String]) {
            var meaning = Meaning()
            var unknown: [String] = []
            for flag in flags {
                guard let known = BlueZGATTFlags.characteristicTable.first(where: { $0.name == flag }) else {
                    unknown.append(flag)
                    continue
                }
                meaning.formUnion(known.meaning)
            }
            if meaning.extended != 0 { meaning.properties |= CharacteristicProperties.extendedProperties.rawValue }
            self.init(
                properties: CharacteristicProperties(rawValue: meaning.properties),
                extendedProperties: CharacteristicExtendedProperties(rawValue: meaning.extended),
                permissions: AttributePermissions(rawValue: meaning.permissions),
                subscriptionPermissions: AttributePermissions(rawValue: meaning.subscription),
                unknownFlags: unknown)
        }

        /// The flags for this meaning, in gatt-api.txt order. ``unknownFlags``
        /// are not included. ``AttributePermissions/readable`` and
        /// ``AttributePermissions/writeable`` follow from the properties in
        /// BlueZ and are not printed on their own; security without the
        /// matching property ("encrypt-write" needs `write`, "encrypt-notify"
        /// needs `notify`) has no flag and is left out.
        public var bluezFlags: [String] {
            var model = Meaning(
                properties: properties.rawValue, extended: extendedProperties.rawValue,
                permissions: permissions.rawValue, subscription: subscriptionPermissions.rawValue)
            model.permissions &= ~(AttributePermissions.readable.rawValue | AttributePermissions.writeable.rawValue)
            return BlueZGATTFlags.mostSpecific(in: BlueZGATTFlags.characteristicTable, matching: model) {
                var reduced = $0
                reduced.permissions &=
                    ~(AttributePermissions.readable.rawValue | AttributePermissions.writeable.rawValue)
                return reduced
            }
        }

        /// Throws when any flag was unknown.
        public func requireKnown() throws(UnknownFlagsError) {
            guard unknownFlags.isEmpty else { throw UnknownFlagsError(flags: unknownFlags, interface: .characteristic) }
        }
    }

    /// What a GattDescriptor1 "Flags" list means.
    public struct Descriptor: Hashable, Sendable {
        /// Access to the value and its security.
        public var permissions: AttributePermissions
        /// Flags this table does not know, in the order given.
        public var unknownFlags: [String]

        /// Flags with the given meaning.
        public init(permissions: AttributePermissions, unknownFlags: [String] = []) {
            self.permissions = permissions
            self.unknownFlags = unknownFlags
        }

        /// Parses a GattDescriptor1 "Flags" list; duplicates are harmless.
        public init(bluezFlags flags: [String]) {
            var meaning = Meaning()
            var unknown: [String] = []
            for flag in flags {
                guard let known = BlueZGATTFlags.descriptorTable.first(where: { $0.name == flag }) else {
                    unknown.append(flag)
                    continue
                }
                meaning.formUnion(known.meaning)
            }
            self.init(permissions: AttributePermissions(rawValue: meaning.permissions), unknownFlags: unknown)
        }

        /// The flags for these permissions, in gatt-api.txt order. Read (write)
        /// security implies readable (writeable), as in BlueZ.
        public var bluezFlags: [String] {
            var permissions = self.permissions
            if !permissions.isDisjoint(with: .readSecurity) { permissions.insert(.readable) }
            if !permissions.isDisjoint(with: .writeSecurity) { permissions.insert(.writeable) }
            return BlueZGATTFlags.mostSpecific(
                in: BlueZGATTFlags.descriptorTable, matching: Meaning(permissions: permissions.rawValue)
            ) { $0 }
        }

        /// Throws when any flag was unknown.
        public func requireKnown() throws(UnknownFlagsError) {
            guard unknownFlags.isEmpty else { throw UnknownFlagsError(flags: unknownFlags, interface: .descriptor) }
        }
    }

    /// Flags that BlueZ's table (and so this one) does not know.
    public struct UnknownFlagsError: Error, Hashable, Sendable, CustomStringConvertible {
        /// The interface whose flags they were.
        public enum Interface: String, Hashable, Sendable {
            /// org.bluez.GattCharacteristic1.
            case characteristic = "GattCharacteristic1"
            /// org.bluez.GattDescriptor1.
            case descriptor = "GattDescriptor1"
        }

        /// The unknown flags, in the order given.
        public let flags: [String]
        /// Whose flags they were.
        public let interface: Interface

        /// `flags` of `interface` are unknown.
        public init(flags: [String], interface: Interface) {
            self.flags = flags
            self.interface = interface
        }

        /// Lists the flags and the interface.
        public var description: String {
            let quoted = flags.map { "\"\($0)\"" }.joined(separator: ", ")
            return "unknown \(interface.rawValue) flag\(flags.count == 1 ? "" : "s"): \(quoted)"
        }
    }

    // MARK: The tables

    struct Meaning: Hashable {
        var properties: UInt8 = 0
        var extended: UInt16 = 0
        var permissions: UInt16 = 0
        var subscription: UInt16 = 0

        mutating func formUnion(_ other: Meaning) {
            properties |= other.properties
            extended |= other.extended
            permissions |= other.permissions
            subscription |= other.subscription
        }

        func isSubset(of other: Meaning) -> Bool {
            properties & ~other.properties == 0 && extended & ~other.extended == 0
                && permissions & ~other.permissions == 0 && subscription & ~other.subscription == 0
        }
    }

    struct Entry {
        let name: String
        let meaning: Meaning

        init(
            _ name: String, _ properties: CharacteristicProperties = [],
            extended: CharacteristicExtendedProperties = [],
            _ permissions: AttributePermissions = [], subscription: AttributePermissions = []
        ) {
            self.name = name
            meaning = Meaning(
                properties: properties.rawValue, extended: extended.rawValue, permissions: permissions.rawValue,
                subscription: subscription.rawValue)
        }
    }

    /// GattCharacteristic1 flags in gatt-api.txt order, with bluetoothd 5.66's
    /// meaning of each (src/gatt-database.c `parse_chrc_flags`; the CCC
    /// permission of "*-notify"/"*-indicate" is our subscription permission).
    static let characteristicTable: [Entry] = [
        Entry("broadcast", .broadcast),
        Entry("read", .read, .readable),
        Entry("write-without-response", .writeWithoutResponse, .writeable),
        Entry("write", .write, .writeable),
        Entry("notify", .notify),
        Entry("indicate", .indicate),
        Entry("authenticated-signed-writes", .authenticatedSignedWrites, .writeable),
        Entry("extended-properties", .extendedProperties),
        Entry("reliable-write", extended: .reliableWrite, .writeable),
        Entry("writable-auxiliaries", extended: .writableAuxiliaries),
        Entry("encrypt-read", .read, [.readable, .readEncryptionRequired]),
        Entry("encrypt-write", .write, [.writeable, .writeEncryptionRequired]),
        Entry("encrypt-notify", .notify, subscription: .writeEncryptionRequired),
        Entry("encrypt-indicate", .indicate, subscription: .writeEncryptionRequired),
        Entry("encrypt-authenticated-read", .read, [.readable, .readAuthenticationRequired]),
        Entry("encrypt-authenticated-write", .write, [.writeable, .writeAuthenticationRequired]),
        Entry("encrypt-authenticated-notify", .notify, subscription: .writeAuthenticationRequired),
        Entry("encrypt-authenticated-indicate", .indicate, subscription: .writeAuthenticationRequired),
        Entry("secure-read", .read, [.readable, .readSecureConnectionsRequired]),
        Entry("secure-write", .write, [.writeable, .writeSecureConnectionsRequired]),
        Entry("secure-notify", .notify, subscription: .writeSecureConnectionsRequired),
        Entry("secure-indicate", .indicate, subscription: .writeSecureConnectionsRequired),
        Entry("authorize", [], .authorizationRequired),
    ]

    /// GattDescriptor1 flags in gatt-api.txt order (src/gatt-database.c
    /// `parse_desc_flags`).
    static let descriptorTable: [Entry] = [
        Entry("read", [], .readable),
        Entry("write", [], .writeable),
        Entry("encrypt-read", [], [.readable, .readEncryptionRequired]),
        Entry("encrypt-write", [], [.writeable, .writeEncryptionRequired]),
        Entry("encrypt-authenticated-read", [], [.readable, .readAuthenticationRequired]),
        Entry("encrypt-authenticated-write", [], [.writeable, .writeAuthenticationRequired]),
        Entry("secure-read", [], [.readable, .readSecureConnectionsRequired]),
        Entry("secure-write", [], [.writeable, .writeSecureConnectionsRequired]),
        Entry("authorize", [], .authorizationRequired),
    ]

    /// The names of the entries whose (reduced) meaning the model holds and no
    /// other such entry's meaning strictly contains.
    static func mostSpecific(in table: [Entry], matching model: Meaning, reduce: (Meaning) -> Meaning) -> [String] {
        let held = table.filter { reduce($0.meaning).isSubset(of: model) }
        return held.filter { entry in
            let mine = reduce(entry.meaning)
            return !held.contains { other in
                let theirs = reduce(other.meaning)
                return theirs != mine && mine.isSubset(of: theirs)
            }
        }.map(\.name)
    }
}

extension GATTCharacteristic {
    /// This characteristic's GattCharacteristic1 "Flags" (see
    /// ``BlueZGATTFlags/Characteristic/bluezFlags``).
    public var bluezFlags: [String] {
        BlueZGATTFlags.Characteristic(
            properties: properties, extendedProperties: extendedProperties, permissions: permissions,
            subscriptionPermissions: subscriptionPermissions
        ).bluezFlags
    }
}

extension GATTDescriptor {
    /// This descriptor's GattDescriptor1 "Flags" (see
    /// ``BlueZGATTFlags/Descriptor/bluezFlags``).
    public var bluezFlags: [String] {
        BlueZGATTFlags.Descriptor(permissions: permissions).bluezFlags
    }
}
