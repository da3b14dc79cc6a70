/// Who may read and write an attribute value, and over what security.
///
/// Permissions are never sent over the air (Core spec Vol 3 Part F 3.2.5); a
/// server enforces them. The bits are bluetoothd's own (`BT_ATT_PERM_*` in
/// src/shared/att-types.h) so a BlueZ database maps one to one. BlueZ
/// expresses them with GattCharacteristic1/GattDescriptor1 "Flags" strings:
/// see ``BlueZGATTFlags``.
public struct AttributePermissions: OptionSet, Hashable, Sendable, CustomStringConvertible {
    /// The bit field, in bluetoothd's layout.
    public let rawValue: UInt16

    /// The permissions whose bits are `rawValue`.
    public init(rawValue: UInt16) {
        self.rawValue = rawValue
    }

    /// 0x0001: the value may be read.
    public static let readable = AttributePermissions(rawValue: 0x0001)
    /// 0x0002: the value may be written.
    public static let writeable = AttributePermissions(rawValue: 0x0002)
    /// 0x0004: reading needs an encrypted link (BlueZ "encrypt-read").
    public static let readEncryptionRequired = AttributePermissions(rawValue: 0x0004)
    /// 0x0008: writing needs an encrypted link (BlueZ "encrypt-write").
    public static let writeEncryptionRequired = AttributePermissions(rawValue: 0x0008)
    /// 0x0010: reading needs encryption with an authenticated (MITM-protected)
    /// key (BlueZ "encrypt-authenticated-read").
    public static let readAuthenticationRequired = AttributePermissions(rawValue: 0x0010)
    /// 0x0020: writing needs encryption with an authenticated key (BlueZ
    /// "encrypt-authenticated-write").
    public static let writeAuthenticationRequired = AttributePermissions(rawValue: 0x0020)
    /// 0x0040: the server application authorizes access (BlueZ "authorize":
    /// bluetoothd asks the application before prepared writes execute, with
    /// the WriteValue option "prepare-authorize").
    public static let authorizationRequired = AttributePermissions(rawValue: 0x0040)
    /// 0x0100: reading needs LE Secure Connections (BlueZ "secure-read").
    public static let readSecureConnectionsRequired = AttributePermissions(rawValue: 0x0100)
    /// 0x0200: writing needs LE Secure Connections (BlueZ "secure-write").
    public static let writeSecureConnectionsRequired = AttributePermissions(rawValue: 0x0200)

    /// Every read-security requirement.
    public static let readSecurity: AttributePermissions = [
        .readEncryptionRequired, .readAuthenticationRequired, .readSecureConnectionsRequired,
    ]
    /// Every write-security requirement.
    public static let writeSecurity: AttributePermissions = [
        .writeEncryptionRequired, .writeAuthenticationRequired, .writeSecureConnectionsRequired,
    ]

    static let names: [(AttributePermissions, String)] = [
        (.readable, "readable"), (.writeable, "writeable"),
        (.readEncryptionRequired, "readEncryptionRequired"), (.writeEncryptionRequired, "writeEncryptionRequired"),
        (.readAuthenticationRequired, "readAuthenticationRequired"),
        (.writeAuthenticationRequired, "writeAuthenticationRequired"),
        (.authorizationRequired, "authorizationRequired"),
        (.readSecureConnectionsRequired, "readSecureConnectionsRequired"),
        (.writeSecureConnectionsRequired, "writeSecureConnectionsRequired"),
    ]

    /// The member names in bit order; unknown bits in hex.
    public var description: String {
        describeOptions(rawValue: UInt64(rawValue), names: Self.names.map { (UInt64($0.0.rawValue), $0.1) })
    }
}
