/// Why advertising data could not be parsed or encoded. Offsets count bytes
/// from the start of the data and point at a structure's length octet.
public enum AdvertisingDataError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The structure at `offset` declares `declaredLength` bytes (type and
    /// data) but only `available` bytes follow its length octet.
    case structureOverrunsEnd(offset: Int, declaredLength: Int, available: Int)
    /// The structure at `offset` carries `length` data bytes, which its type
    /// does not allow.
    case invalidLength(type: AdvertisingDataType, offset: Int, length: Int, expected: LengthRequirement)
    /// One structure would carry more than
    /// ``AdvertisingStructure/maximumDataLength`` bytes.
    case structureTooLong(type: AdvertisingDataType, dataLength: Int)
    /// The encoding takes `length` bytes, more than `limit` allows; `fields`
    /// lists what took the room.
    case tooLong(length: Int, limit: AdvertisingDataLimit, fields: [FieldSize])
    /// ``AdvertisingData/others`` holds a type that has a typed field, which
    /// would encode it twice.
    case modelledTypeInOthers(AdvertisingDataType)

    /// What a type requires of its data length.
    public enum LengthRequirement: Hashable, Sendable, CustomStringConvertible {
        /// Exactly this many bytes.
        case exactly(Int)
        /// At least this many bytes.
        case atLeast(Int)
        /// A multiple of this many bytes (a UUID list).
        case multipleOf(Int)

        /// `exactly 1 byte`, `at least 2 bytes`, `a multiple of 16 bytes`.
        public var description: String {
            switch self {
            case .exactly(let count): return "exactly \(count) byte\(count == 1 ? "" : "s")"
            case .atLeast(let count): return "at least \(count) byte\(count == 1 ? "" : "s")"
            case .multipleOf(let count): return "a multiple of \(count) bytes"
            }
        }
    }

    /// The bytes one structure takes on the wire.
    public struct FieldSize: Hashable, Sendable, CustomStringConvertible {
        /// The structure's type.
        public let type: AdvertisingDataType
        /// Its length on the wire, length and type octets included.
        public let size: Int

        /// A structure of `type` taking `size` bytes.
        public init(type: AdvertisingDataType, size: Int) {
            self.type = type
            self.size = size
        }

        /// `Complete Local Name (0x09) 14`.
        public var description: String { "\(type) \(size)" }
    }

    /// Says what is wrong, where, and the sizes involved.
    public var description: String {
        switch self {
        case .structureOverrunsEnd(let offset, let declared, let available):
            return "AD structure at offset \(offset) declares \(declared) bytes but only \(available) follow"
        case .invalidLength(let type, let offset, let length, let expected):
            return "\(type) at offset \(offset) has \(length) data bytes; it needs \(expected)"
        case .structureTooLong(let type, let length):
            return "\(type) has \(length) data bytes; one AD structure carries at most "
                + "\(AdvertisingStructure.maximumDataLength)"
        case .tooLong(let length, let limit, let fields):
            let parts = fields.map(\.description).joined(separator: ", ")
            return "advertising data needs \(length) bytes, over the \(limit) limit (\(parts))"
        case .modelledTypeInOthers(let type):
            return "\(type) belongs in its typed AdvertisingData field, not in others"
        }
    }
}

/// The most bytes one advertising (or scan response) payload may hold.
public struct AdvertisingDataLimit: Hashable, Sendable, CustomStringConvertible {
    /// The limit in bytes.
    public let maximumLength: Int
    /// What the limit is called.
    public let name: String

    /// 31 bytes: legacy advertising PDUs (ADV_IND, SCAN_RSP, ...), BlueZ's
    /// `BT_AD_MAX_DATA_LEN`.
    public static let legacy = AdvertisingDataLimit(maximumLength: 31, name: "legacy")
    /// 251 bytes: what one HCI LE Set Extended Advertising Data command carries
    /// and what the kernel accepts for an extended advertising instance.
    public static let extended = AdvertisingDataLimit(maximumLength: 251, name: "extended")

    /// A limit of `maximumLength` bytes called `name` (such as an adapter's
    /// own extended advertising length).
    public init(maximumLength: Int, name: String) {
        self.maximumLength = maximumLength
        self.name = name
    }

    /// `31-byte legacy`.
    public var description: String { "\(maximumLength)-byte \(name)" }
}
