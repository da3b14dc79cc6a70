import GATT
import JSON

/// What a manager with a restore identifier persists, like Core Bluetooth's
/// state restoration: for a central the known peripherals, the connections it
/// wants and its subscriptions; for a peripheral its services and its
/// advertisement.
public struct RestorationState: Hashable, Sendable {
    /// A peripheral seen before, with what is needed to find it again.
    public struct KnownPeripheral: Hashable, Sendable {
        /// Its identifier.
        public var identifier: PeripheralIdentifier
        /// The adapter address it was seen through.
        public var adapter: String
        /// Its address.
        public var address: String
        /// Its address type.
        public var addressType: AddressType
        /// Its last known name.
        public var name: String?

        /// A record with the given fields.
        public init(
            identifier: PeripheralIdentifier, adapter: String, address: String, addressType: AddressType,
            name: String? = nil
        ) {
            self.identifier = identifier
            self.adapter = adapter
            self.address = address
            self.addressType = addressType
            self.name = name
        }
    }

    /// Central: peripherals seen before.
    public var knownPeripherals: [KnownPeripheral]
    /// Central: peripherals to keep connected.
    public var desiredConnections: [PeripheralIdentifier]
    /// Central: characteristics to keep subscribed.
    public var subscriptions: [CharacteristicReference]
    /// Peripheral: the published services.
    public var services: [GATTService]
    /// Peripheral: the advertisement to keep running, nil when not advertising.
    public var advertising: AdvertisingData?

    /// A state with the given contents (empty by default).
    public init(
        knownPeripherals: [KnownPeripheral] = [], desiredConnections: [PeripheralIdentifier] = [],
        subscriptions: [CharacteristicReference] = [], services: [GATTService] = [], advertising: AdvertisingData? = nil
    ) {
        self.knownPeripherals = knownPeripherals
        self.desiredConnections = desiredConnections
        self.subscriptions = subscriptions
        self.services = services
        self.advertising = advertising
    }
}

/// Why a stored state could not be read.
public struct RestorationDecodeError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Where in the document (a JSON path like `subscriptions[2].service`).
    public var path: String
    /// What is wrong there.
    public var reason: String

    /// An error at `path`.
    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    /// `path: reason`.
    public var description: String { "\(path): \(reason)" }
}

extension RestorationState {
    /// The format version written and understood.
    public static let formatVersion: Int64 = 1

    /// The state as a JSON document.
    public var json: JSON {
        var root: JSONObject = ["version": .int(Self.formatVersion)]
        root["knownPeripherals"] = .array(
            knownPeripherals.map { known in
                var object: JSONObject = [
                    "identifier": .string(known.identifier.uuidString), "adapter": .string(known.adapter),
                    "address": .string(known.address), "addressType": .string(known.addressType.rawValue),
                ]
                if let name = known.name { object["name"] = .string(name) }
                return .object(object)
            })
        root["desiredConnections"] = .array(desiredConnections.map { .string($0.uuidString) })
        root["subscriptions"] = .array(
            subscriptions.map { reference in
                .object([
                    "peripheral": .string(reference.peripheral.uuidString),
                    "service": .string(reference.service.uuidString),
                    "characteristic": .string(reference.characteristic.uuidString),
                    "instance": .int(Int64(reference.instance)),
                ])
            })
        root["services"] = .array(services.map(Self.encode(service:)))
        if let advertising, let bytes = try? advertising.encode(limit: .extended) {
            root["advertising"] = .string(Hex.encode(bytes))
        }
        return .object(root)
    }

    /// Reads a state from its JSON document.
    public init(json: JSON) throws(RestorationDecodeError) {
        let root = Reader(json, path: "$")
        guard try root.member("version").int() == Self.formatVersion else {
            throw RestorationDecodeError(path: "$.version", reason: "unsupported version")
        }
        self.init()
        for item in try root.member("knownPeripherals").elements() {
            let type = try item.member("addressType").string()
            guard let addressType = AddressType(rawValue: type) else {
                throw RestorationDecodeError(path: item.path + ".addressType", reason: "not public or random")
            }
            knownPeripherals.append(
                KnownPeripheral(
                    identifier: try item.member("identifier").identifier(),
                    adapter: try item.member("adapter").string(),
                    address: try item.member("address").string(), addressType: addressType,
                    name: try item.optionalMember("name")?.string()))
        }
        desiredConnections = try root.member("desiredConnections").elements().map {
            item throws(RestorationDecodeError) in
            try item.identifier()
        }
        for item in try root.member("subscriptions").elements() {
            subscriptions.append(
                CharacteristicReference(
                    peripheral: try item.member("peripheral").identifier(), service: try item.member("service").uuid(),
                    characteristic: try item.member("characteristic").uuid(),
                    instance: Int(try item.member("instance").int())))
        }
        for item in try root.member("services").elements() { services.append(try Self.decode(service: item)) }
        if let advertising = try root.optionalMember("advertising") {
            do {
                self.advertising = try AdvertisingData.parse(try advertising.bytes())
            } catch let error as RestorationDecodeError {
                throw error
            } catch {
                throw RestorationDecodeError(path: advertising.path, reason: "\(error)")
            }
        }
    }

    private static func encode(service: GATTService) -> JSON {
        .object([
            "uuid": .string(service.uuid.uuidString), "primary": .bool(service.isPrimary),
            "characteristics": .array(
                service.characteristics.map { characteristic in
                    var object: JSONObject = [
                        "uuid": .string(characteristic.uuid.uuidString),
                        "properties": .int(Int64(characteristic.properties.rawValue)),
                        "permissions": .int(Int64(characteristic.permissions.rawValue)),
                    ]
                    if let value = characteristic.value { object["value"] = .string(Hex.encode(value)) }
                    object["descriptors"] = .array(
                        characteristic.descriptors.map { descriptor in
                            var object: JSONObject = [
                                "uuid": .string(descriptor.uuid.uuidString),
                                "permissions": .int(Int64(descriptor.permissions.rawValue)),
                            ]
                            if let value = descriptor.value { object["value"] = .string(Hex.encode(value)) }
                            return .object(object)
                        })
                    return .object(object)
                }),
        ])
    }

    private static func decode(service item: Reader) throws(RestorationDecodeError) -> GATTService {
        var service = GATTService(uuid: try item.member("uuid").uuid(), isPrimary: try item.member("primary").bool())
        for entry in try item.member("characteristics").elements() {
            var characteristic = GATTCharacteristic(
                uuid: try entry.member("uuid").uuid(),
                properties: CharacteristicProperties(
                    rawValue: UInt8(truncatingIfNeeded: try entry.member("properties").int())),
                permissions: AttributePermissions(
                    rawValue: UInt16(truncatingIfNeeded: try entry.member("permissions").int())),
                value: try entry.optionalMember("value")?.bytes())
            for descriptorEntry in try entry.member("descriptors").elements() {
                characteristic.descriptors.append(
                    GATTDescriptor(
                        uuid: try descriptorEntry.member("uuid").uuid(),
                        permissions: AttributePermissions(
                            rawValue: UInt16(truncatingIfNeeded: try descriptorEntry.member("permissions").int())),
                        value: try descriptorEntry.optionalMember("value")?.bytes()))
            }
            service.characteristics.append(characteristic)
        }
        return service
    }
}

/// Reads typed members from a JSON document, naming the path of what is wrong.
private struct Reader {
    let value: JSON
    let path: String

    init(_ value: JSON, path: String) {
        self.value = value
        self.path = path
    }

    func member(_ key: String) throws(RestorationDecodeError) -> Reader {
        guard let found = try optionalMember(key) else {
            throw RestorationDecodeError(path: path + "." + key, reason: "missing")
        }
        return found
    }

    func optionalMember(_ key: String) throws(RestorationDecodeError) -> Reader? {
        guard let object = value.objectValue else { throw RestorationDecodeError(path: path, reason: "not an object") }
        return object[key].map { Reader($0, path: path + "." + key) }
    }

    func elements() throws(RestorationDecodeError) -> [Reader] {
        guard let array = value.arrayValue else { throw RestorationDecodeError(path: path, reason: "not an array") }
        return array.enumerated().map { Reader($1, path: "\(path)[\($0)]") }
    }

    func string() throws(RestorationDecodeError) -> String {
        guard let string = value.stringValue else { throw RestorationDecodeError(path: path, reason: "not a string") }
        return string
    }

    func int() throws(RestorationDecodeError) -> Int64 {
        guard let int = value.intValue else { throw RestorationDecodeError(path: path, reason: "not an integer") }
        return int
    }

    func bool() throws(RestorationDecodeError) -> Bool {
        guard let bool = value.boolValue else { throw RestorationDecodeError(path: path, reason: "not a Boolean") }
        return bool
    }

    func uuid() throws(RestorationDecodeError) -> BluetoothUUID {
        guard let uuid = BluetoothUUID(try string()) else {
            throw RestorationDecodeError(path: path, reason: "not a UUID")
        }
        return uuid
    }

    func identifier() throws(RestorationDecodeError) -> PeripheralIdentifier {
        guard let id = PeripheralIdentifier(try string()) else {
            throw RestorationDecodeError(path: path, reason: "not an identifier")
        }
        return id
    }

    func bytes() throws(RestorationDecodeError) -> [UInt8] {
        guard let bytes = Hex.decode(try string()) else { throw RestorationDecodeError(path: path, reason: "not hex") }
        return bytes
    }
}

/// Bytes as hex text: written lower-case, read in either case (restoration
/// files, control API values).
public enum Hex {
    /// `bytes` as lower-case hex digits in pairs.
    public static func encode(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] })
    }

    /// The bytes of hex digits in pairs (either case), or nil for anything else.
    public static func decode(_ text: String) -> [UInt8]? {
        let characters = Array(text.utf8)
        guard characters.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(characters.count / 2)
        for index in stride(from: 0, to: characters.count, by: 2) {
            guard let high = nibble(characters[index]), let low = nibble(characters[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
