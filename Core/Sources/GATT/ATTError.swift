/// An ATT error code, as carried in an ATT Error Response (Core spec Vol 3
/// Part F 3.4.1.1, Table 3.4) or named by a GATT profile.
///
/// Open: every `UInt8` is a value, so codes this table does not name
/// (reserved ones, application errors 0x80-0x9F, newer spec additions)
/// round-trip unchanged. Throw it as an `Error`.
public struct ATTError: Error, RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The code on the wire.
    public let rawValue: UInt8

    /// The error with code `rawValue`.
    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// The error with code `code`.
    public init(_ code: UInt8) {
        self.rawValue = code
    }

    /// 0x01 Invalid Handle: the handle is not valid on this server.
    public static let invalidHandle = ATTError(0x01)
    /// 0x02 Read Not Permitted: the attribute cannot be read.
    public static let readNotPermitted = ATTError(0x02)
    /// 0x03 Write Not Permitted: the attribute cannot be written.
    public static let writeNotPermitted = ATTError(0x03)
    /// 0x04 Invalid PDU: the request was malformed.
    public static let invalidPDU = ATTError(0x04)
    /// 0x05 Insufficient Authentication: the link must be authenticated first.
    public static let insufficientAuthentication = ATTError(0x05)
    /// 0x06 Request Not Supported: the server does not support the request.
    public static let requestNotSupported = ATTError(0x06)
    /// 0x07 Invalid Offset: the offset is past the end of the attribute.
    public static let invalidOffset = ATTError(0x07)
    /// 0x08 Insufficient Authorization: the server application refused access.
    public static let insufficientAuthorization = ATTError(0x08)
    /// 0x09 Prepare Queue Full: too many prepared writes.
    public static let prepareQueueFull = ATTError(0x09)
    /// 0x0A Attribute Not Found: no attribute in the handle range.
    public static let attributeNotFound = ATTError(0x0A)
    /// 0x0B Attribute Not Long: the attribute cannot be read or written with
    /// blob/prepared requests.
    public static let attributeNotLong = ATTError(0x0B)
    /// 0x0C Encryption Key Size Too Short (formerly Insufficient Encryption Key
    /// Size).
    public static let insufficientEncryptionKeySize = ATTError(0x0C)
    /// 0x0D Invalid Attribute Value Length.
    public static let invalidAttributeValueLength = ATTError(0x0D)
    /// 0x0E Unlikely Error: the request could not be completed for another reason.
    public static let unlikelyError = ATTError(0x0E)
    /// 0x0F Insufficient Encryption: the link must be encrypted first.
    public static let insufficientEncryption = ATTError(0x0F)
    /// 0x10 Unsupported Group Type.
    public static let unsupportedGroupType = ATTError(0x10)
    /// 0x11 Insufficient Resources.
    public static let insufficientResources = ATTError(0x11)
    /// 0x12 Database Out Of Sync: the client's view of the database is stale.
    public static let databaseOutOfSync = ATTError(0x12)
    /// 0x13 Value Not Allowed.
    public static let valueNotAllowed = ATTError(0x13)
    /// 0xFC Write Request Rejected (Core Specification Supplement Part B 1.2).
    public static let writeRequestRejected = ATTError(0xFC)
    /// 0xFD Client Characteristic Configuration Descriptor Improperly Configured.
    public static let cccdImproperlyConfigured = ATTError(0xFD)
    /// 0xFE Procedure Already in Progress.
    public static let procedureAlreadyInProgress = ATTError(0xFE)
    /// 0xFF Out of Range.
    public static let outOfRange = ATTError(0xFF)

    /// The first application error code, 0x80.
    public static let firstApplicationError = ATTError(0x80)
    /// The last application error code, 0x9F.
    public static let lastApplicationError = ATTError(0x9F)

    /// The application error `code`, or nil when `code` is outside 0x80-0x9F.
    public static func application(_ code: UInt8) -> ATTError? {
        let error = ATTError(code)
        return error.isApplicationError ? error : nil
    }

    /// Whether the code is an application error (0x80-0x9F), whose meaning is
    /// defined by the profile or application.
    public var isApplicationError: Bool {
        (0x80...0x9F).contains(rawValue)
    }

    /// Whether the code is a common profile and service error (0xE0-0xFF).
    public var isCommonProfileError: Bool {
        rawValue >= 0xE0
    }

    /// The specification's name of the code, or nil when this table has none.
    public var name: String? {
        Self.names[rawValue]
    }

    /// `Read Not Permitted (0x02)`, `Application Error (0x85)`,
    /// `Reserved (0x30)`, `Common Profile Error (0xE5)`.
    public var description: String {
        let label: String
        if let name {
            label = name
        } else if isApplicationError {
            label = "Application Error"
        } else if isCommonProfileError {
            label = "Common Profile Error"
        } else {
            label = "Reserved"
        }
        return "\(label) (\(hexByte(rawValue)))"
    }

    /// Orders by code.
    public static func < (lhs: ATTError, rhs: ATTError) -> Bool {
        lhs.rawValue < rhs.rawValue
    }

    private static let names: [UInt8: String] = [
        0x01: "Invalid Handle",
        0x02: "Read Not Permitted",
        0x03: "Write Not Permitted",
        0x04: "Invalid PDU",
        0x05: "Insufficient Authentication",
        0x06: "Request Not Supported",
        0x07: "Invalid Offset",
        0x08: "Insufficient Authorization",
        0x09: "Prepare Queue Full",
        0x0A: "Attribute Not Found",
        0x0B: "Attribute Not Long",
        0x0C: "Encryption Key Size Too Short",
        0x0D: "Invalid Attribute Value Length",
        0x0E: "Unlikely Error",
        0x0F: "Insufficient Encryption",
        0x10: "Unsupported Group Type",
        0x11: "Insufficient Resources",
        0x12: "Database Out Of Sync",
        0x13: "Value Not Allowed",
        0xFC: "Write Request Rejected",
        0xFD: "Client Characteristic Configuration Descriptor Improperly Configured",
        0xFE: "Procedure Already in Progress",
        0xFF: "Out of Range",
    ]
}
