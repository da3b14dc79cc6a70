/// The one table between ATT error codes and BlueZ D-Bus errors, both ways,
/// as bluetoothd 5.66 does it.
///
/// **Server side** (a local GATT application answers bluetoothd's ReadValue,
/// WriteValue or AcquireWrite; bluetoothd sends an ATT Error Response to the
/// peer). From src/gatt-database.c `dbus_error_to_att_ecode`:
///
/// | application replies                        | peer gets                 |
/// |--------------------------------------------|---------------------------|
/// | `Failed` with message "0x80"..."0x9f"      | that application error    |
/// | `Failed` with a number outside 0x80-0x9F   | 0x0E Unlikely Error       |
/// | `Failed` with a non-number (or no) message | 0x80                      |
/// | `NotSupported`                             | 0x06 Request Not Supported |
/// | `NotAuthorized`                            | 0x08 Insufficient Authorization |
/// | `InvalidValueLength`                       | 0x0D Invalid Attribute Value Length |
/// | `InvalidOffset`                            | 0x07 Invalid Offset       |
/// | `InProgress`                               | 0xFE Procedure Already in Progress |
/// | `NotPermitted` to a read                   | 0x02 Read Not Permitted   |
/// | `NotPermitted` to a write or AcquireWrite  | 0x03 Write Not Permitted  |
/// | any other name                             | 0x0E Unlikely Error       |
///
/// The number is read as C `strtol(message, &end, 0)` reads it (hex with 0x,
/// octal with a leading 0, decimal), and only a message that is all number
/// counts; an empty message reads as 0 and so gives 0x0E.
///
/// **Client side** (an ATT Error Response from a remote server surfaces to a
/// caller of the device's GattCharacteristic1/GattDescriptor1 ReadValue or
/// WriteValue). From src/gatt-client.c `create_gatt_dbus_error`, with
/// messages from src/error.c:
///
/// | ATT error                                  | D-Bus error               |
/// |--------------------------------------------|---------------------------|
/// | 0x02 Read Not Permitted                    | `NotPermitted` "Read not permitted" |
/// | 0x03 Write Not Permitted                   | `NotPermitted` "Write not permitted" |
/// | 0x05, 0x0C, 0x0F (authentication, key size, encryption) | `NotPermitted` "Not paired" |
/// | 0x07 Invalid Offset                        | `InvalidArguments` "Invalid offset" |
/// | 0x0D Invalid Attribute Value Length        | `InvalidArguments` "Invalid Length" |
/// | 0x08 Insufficient Authorization            | `NotAuthorized` "Operation Not Authorized" |
/// | 0x06 Request Not Supported                 | `NotSupported` "Operation is not supported" |
/// | any other code                             | `Failed` "Operation failed with ATT error: 0x%02x" |
///
/// Note the client side never uses `InvalidOffset` or `InvalidValueLength`,
/// although gatt-api.txt lists them: offset and length errors arrive as
/// `InvalidArguments`.
public enum BlueZATTErrorMapping {
    /// Which application method bluetoothd called; it decides what
    /// `NotPermitted` means.
    public enum Access: Hashable, Sendable {
        /// ReadValue.
        case read
        /// WriteValue or AcquireWrite.
        case write
    }

    /// The ATT error bluetoothd sends the peer when a local application answers
    /// its method call with `error` (`dbus_error_to_att_ecode`).
    public static func attError(fromApplicationError error: BlueZError, access: Access) -> ATTError {
        switch error.name {
        case .failed:
            // libdbus gives an error without a message its name as message:
            // not a number, so 0x80.
            guard let number = cLongParsingWholeString(error.message ?? error.name.rawValue) else {
                return .firstApplicationError
            }
            let code = UInt32(truncatingIfNeeded: number)
            guard (0x80...0x9F).contains(code) else { return .unlikelyError }
            return ATTError(UInt8(code))
        case .notSupported: return .requestNotSupported
        case .notAuthorized: return .insufficientAuthorization
        case .invalidValueLength: return .invalidAttributeValueLength
        case .invalidOffset: return .invalidOffset
        case .inProgress: return .procedureAlreadyInProgress
        case .notPermitted: return access == .read ? .readNotPermitted : .writeNotPermitted
        default: return .unlikelyError
        }
    }

    /// The reply a local application gives bluetoothd so that the peer
    /// receives `error`.
    ///
    /// Not every code can be relayed (see the table above): for the others
    /// the reply is `Failed` with the code as message ("0x05"), which
    /// bluetoothd logs as an invalid error code before sending Unlikely Error
    /// (0x0E), so the log still shows what was meant. Application errors are
    /// `Failed` with their code too, and relay exactly.
    public static func applicationError(for error: ATTError, access: Access) -> BlueZError {
        let name: BlueZError.Name
        switch error {
        case .requestNotSupported: name = .notSupported
        case .insufficientAuthorization: name = .notAuthorized
        case .invalidAttributeValueLength: name = .invalidValueLength
        case .invalidOffset: name = .invalidOffset
        case .procedureAlreadyInProgress: name = .inProgress
        case .readNotPermitted where access == .read: name = .notPermitted
        case .writeNotPermitted where access == .write: name = .notPermitted
        default: return BlueZError(.failed, "0x" + hexString([error.rawValue]))
        }
        return BlueZError(name, error.description)
    }

    /// The code the peer actually receives when a local application answers
    /// with ``applicationError(for:access:)``: `error` itself when bluetoothd
    /// can relay it, else Unlikely Error (0x0E).
    public static func relayedATTError(for error: ATTError, access: Access) -> ATTError {
        attError(fromApplicationError: applicationError(for: error, access: access), access: access)
    }

    /// The D-Bus error bluetoothd returns to a caller of a remote
    /// characteristic's or descriptor's ReadValue/WriteValue when the peer
    /// answered with `error` (`create_gatt_dbus_error`). Code 0, which BlueZ
    /// uses for a failure without an ATT code, gives `Failed` "Operation failed".
    public static func clientError(for error: ATTError) -> BlueZError {
        switch error {
        case .readNotPermitted: return BlueZError(.notPermitted, "Read not permitted")
        case .writeNotPermitted: return BlueZError(.notPermitted, "Write not permitted")
        case .insufficientAuthentication, .insufficientEncryption, .insufficientEncryptionKeySize:
            return BlueZError(.notPermitted, "Not paired")
        case .invalidOffset: return BlueZError(.invalidArguments, "Invalid offset")
        case .invalidAttributeValueLength: return BlueZError(.invalidArguments, "Invalid Length")
        case .insufficientAuthorization: return BlueZError(.notAuthorized, "Operation Not Authorized")
        case .requestNotSupported: return BlueZError(.notSupported, "Operation is not supported")
        case ATTError(0): return BlueZError(.failed, "Operation failed")
        default: return BlueZError(.failed, failedWithCodePrefix + hexString([error.rawValue]))
        }
    }

    /// What a D-Bus error from a remote characteristic's or descriptor's
    /// ReadValue/WriteValue says about the peer's answer: the inverse of
    /// ``clientError(for:)``.
    public static func cause(ofClientError error: BlueZError) -> ClientErrorCause {
        let message = error.message ?? ""
        switch (error.name, message) {
        case (.notPermitted, "Read not permitted"): return .att(.readNotPermitted)
        case (.notPermitted, "Write not permitted"): return .att(.writeNotPermitted)
        case (.notPermitted, "Not paired"): return .insufficientSecurity
        case (.invalidArguments, "Invalid offset"): return .att(.invalidOffset)
        case (.invalidArguments, "Invalid Length"): return .att(.invalidAttributeValueLength)
        case (.notAuthorized, _): return .att(.insufficientAuthorization)
        case (.notSupported, _): return .att(.requestNotSupported)
        case (.failed, _):
            guard message.hasPrefix(failedWithCodePrefix) else { return .notATT }
            let digits = message.dropFirst(failedWithCodePrefix.count)
            guard digits.count == 2, digits.allSatisfy(\.isHexDigit), let code = UInt8(digits, radix: 16) else {
                return .notATT
            }
            return .att(ATTError(code))
        default: return .notATT
        }
    }

    /// What a client-side D-Bus error reveals about the peer's ATT answer.
    public enum ClientErrorCause: Hashable, Sendable {
        /// The peer answered with this ATT error. BlueZ also gives
        /// `NotPermitted` "Write not permitted" when asked to write a CCCD
        /// directly (use StartNotify), and `NotSupported` when the
        /// characteristic lacks the property for the request.
        case att(ATTError)
        /// "Not paired": the peer answered Insufficient Authentication (0x05),
        /// Encryption Key Size Too Short (0x0C) or Insufficient Encryption
        /// (0x0F); BlueZ does not say which. Pairing is the remedy.
        case insufficientSecurity
        /// Not an ATT answer from the peer: BlueZ refused or failed locally
        /// (not connected, busy, bad arguments, timeout, ...).
        case notATT
    }

    static let failedWithCodePrefix = "Operation failed with ATT error: 0x"
}

/// The value of C's `strtol(text, &end, 0)` on a 64-bit `long`, or nil when
/// `end` does not reach the end of `text` (glibc semantics: leading
/// whitespace, a sign, `0x` for hex, leading `0` for octal; out-of-range values
/// saturate; no digits leaves `end` at the start, so only "" reads as 0).
func cLongParsingWholeString(_ text: String) -> Int64? {
    let bytes = Array(text.utf8)
    var index = 0
    func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0D).contains(byte) }
    func digitValue(_ byte: UInt8) -> Int? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return Int(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return Int(byte - UInt8(ascii: "a")) + 10
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return Int(byte - UInt8(ascii: "A")) + 10
        default: return nil
        }
    }
    while index < bytes.count, isSpace(bytes[index]) { index += 1 }
    var negative = false
    if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
        negative = bytes[index] == UInt8(ascii: "-")
        index += 1
    }
    var base = 10
    if index < bytes.count, bytes[index] == UInt8(ascii: "0") {
        let hasX = index + 1 < bytes.count && (bytes[index + 1] | 0x20) == UInt8(ascii: "x")
        if hasX, index + 2 < bytes.count, let digit = digitValue(bytes[index + 2]), digit < 16 {
            base = 16
            index += 2
        } else {
            base = 8
        }
    }
    var magnitude: UInt64 = 0
    var overflow = false
    var digits = 0
    while index < bytes.count, let digit = digitValue(bytes[index]), digit < base {
        let (shifted, overflowA) = magnitude.multipliedReportingOverflow(by: UInt64(base))
        let (sum, overflowB) = shifted.addingReportingOverflow(UInt64(digit))
        overflow = overflow || overflowA || overflowB
        magnitude = sum
        digits += 1
        index += 1
    }
    guard digits > 0 else { return bytes.isEmpty ? 0 : nil }
    guard index == bytes.count else { return nil }
    if negative {
        if overflow || magnitude > UInt64(Int64.max) + 1 { return Int64.min }
        return magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude)
    }
    if overflow || magnitude > UInt64(Int64.max) { return Int64.max }
    return Int64(magnitude)
}
