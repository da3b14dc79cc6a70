/// The profile's binary values, named in errors.
public enum PaymentTerminalFormat: String, Sendable, Hashable, CaseIterable {
    /// The Terminal Info characteristic's value.
    case terminalInfo = "Terminal Info"
    /// A Payment Request write.
    case paymentRequest = "Payment Request"
    /// A Transaction Status indication.
    case transactionStatus = "Transaction Status"
    /// A Status Query write.
    case statusQuery = "Status Query"
}

/// Why bytes from a peer are not a valid value of the profile. Decoders throw
/// it for truncated, oversized, malformed or unknown-version input; they never
/// trap.
public enum PaymentTerminalDecodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No bytes at all.
    case empty(format: PaymentTerminalFormat)
    /// The version byte is not one this code understands.
    case unsupportedVersion(format: PaymentTerminalFormat, version: UInt8)
    /// The value ended inside `field`: `needed` bytes were required, `got` given.
    case truncated(format: PaymentTerminalFormat, field: String, needed: Int, got: Int)
    /// Longer than the format's maximum size.
    case oversized(format: PaymentTerminalFormat, size: Int, maximum: Int)
    /// A length-prefixed field claims more than its maximum.
    case fieldTooLong(format: PaymentTerminalFormat, field: String, length: Int, maximum: Int)
    /// A field holds a value the format does not allow.
    case invalidField(format: PaymentTerminalFormat, field: String, reason: String)
    /// Bytes left over after the last field.
    case trailingBytes(format: PaymentTerminalFormat, count: Int)

    /// The format the bad bytes were meant to be.
    public var format: PaymentTerminalFormat {
        switch self {
        case .empty(let format), .unsupportedVersion(let format, _), .truncated(let format, _, _, _),
            .oversized(let format, _, _), .fieldTooLong(let format, _, _, _), .invalidField(let format, _, _),
            .trailingBytes(let format, _):
            format
        }
    }

    /// One sentence naming the format and the problem.
    public var description: String {
        switch self {
        case .empty(let format): "\(format.rawValue): no bytes"
        case .unsupportedVersion(let format, let version): "\(format.rawValue): unsupported version \(version)"
        case .truncated(let format, let field, let needed, let got):
            "\(format.rawValue): truncated in \(field) (needs \(needed) bytes, got \(got))"
        case .oversized(let format, let size, let maximum):
            "\(format.rawValue): \(size) bytes, more than the maximum \(maximum)"
        case .fieldTooLong(let format, let field, let length, let maximum):
            "\(format.rawValue): \(field) is \(length) bytes, more than the maximum \(maximum)"
        case .invalidField(let format, let field, let reason): "\(format.rawValue): \(field) \(reason)"
        case .trailingBytes(let format, let count): "\(format.rawValue): \(count) unexpected bytes after the value"
        }
    }
}

/// Why a value cannot be built or encoded (a programming or config error on
/// our side, reported before anything is sent).
public struct PaymentTerminalValueError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The field at fault.
    public var field: String
    /// What is wrong with it.
    public var reason: String

    /// An error about `field`.
    public init(field: String, _ reason: String) {
        self.field = field
        self.reason = reason
    }

    /// `field reason`.
    public var description: String { "\(field) \(reason)" }
}
