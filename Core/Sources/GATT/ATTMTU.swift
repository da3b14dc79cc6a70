/// An ATT_MTU on LE and the payload sizes it allows (Core spec Vol 3 Part F
/// 3.4). Always within ``minimum``...``maximum``: values from a peer or BlueZ
/// are clamped, never trusted.
public struct ATTMTU: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// 23: the LE default and least ATT_MTU (`BT_ATT_DEFAULT_LE_MTU`).
    public static let minimum = ATTMTU(clamping: 23)
    /// 517: the most BlueZ negotiates (`BT_ATT_MAX_LE_MTU`): a 512-byte value
    /// plus the 5-byte Prepare Write header.
    public static let maximum = ATTMTU(clamping: 517)
    /// 512: the longest attribute value (Core spec Vol 3 Part F 3.2.9).
    public static let maximumAttributeValueLength = 512

    /// The MTU in bytes, within 23...517.
    public let value: Int

    /// `value` clamped to 23...517.
    public init(clamping value: Int) {
        self.value = min(max(value, 23), 517)
    }

    /// `value` (e.g. BlueZ's "mtu" option or AcquireWrite result) clamped to
    /// 23...517.
    public init(clamping value: UInt16) {
        self.init(clamping: Int(value))
    }

    /// Bytes of value in a notification, indication, Write Request or Write
    /// Command: MTU - 3 (opcode and handle). 20 at the default MTU.
    public var maximumWritePayload: Int { value - 3 }

    /// Bytes of value in a notification or indication: MTU - 3.
    public var maximumNotificationPayload: Int { value - 3 }

    /// Bytes of value in a Read Response or Read Blob Response: MTU - 1
    /// (opcode). A longer value needs Read Blob requests.
    public var maximumReadPayload: Int { value - 1 }

    /// Bytes of value in one Prepare Write Request of a long write: MTU - 5
    /// (opcode, handle, offset).
    public var maximumPreparedWritePayload: Int { value - 5 }

    /// Splits `payload` into Write Command (write-without-response) chunks of
    /// at most ``maximumWritePayload`` bytes, in order; only the last may be
    /// shorter. An empty payload gives no chunks.
    public func writeWithoutResponseChunks(of payload: [UInt8]) -> [[UInt8]] {
        stride(from: 0, to: payload.count, by: maximumWritePayload).map {
            Array(payload[$0..<min($0 + maximumWritePayload, payload.count)])
        }
    }

    /// Orders by size.
    public static func < (lhs: ATTMTU, rhs: ATTMTU) -> Bool {
        lhs.value < rhs.value
    }

    /// `ATT_MTU 23`.
    public var description: String { "ATT_MTU \(value)" }
}
