import BTHomeCrypto
import Glibc
import IO

/// The BTHome bind keys, one device per line:
///
/// ```
/// # address          bind key (32 hex digits)
/// 54:48:E6:8F:80:A5  231d39c1d7cc1ab1aee224cd096db932
/// ```
///
/// Blank lines and lines starting with `#` are skipped. Errors name the line,
/// never its contents: a line that does not parse may hold a key.
public struct BindKeyFile: Sendable, Hashable {
    /// The keys by device address.
    public var keys: [DeviceAddress: BTHomeBindKey]

    /// The largest key file read (about 15,000 keys).
    public static let maximumBytes = 1 << 20

    /// Parses the file's bytes.
    public static func parse(_ bytes: [UInt8]) throws(BindKeyFileError) -> BindKeyFile {
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .notText }
        var keys: [DeviceAddress: BTHomeBindKey] = [:]
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let number = index + 1
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" })
            guard let first = fields.first, !first.hasPrefix("#") else { continue }
            guard fields.count == 2 else { throw .line(number, "expected an address and a bind key") }
            guard let address = DeviceAddress(first) else {
                throw .line(number, "the address is not AA:BB:CC:DD:EE:FF")
            }
            guard let key = BTHomeBindKey(hex: fields[1]) else {
                throw .line(number, "the bind key is not 32 hex digits")
            }
            guard keys.updateValue(key, forKey: address) == nil else {
                throw .line(number, "a second key for \(address)")
            }
        }
        return BindKeyFile(keys: keys)
    }
}

/// Why the key file was refused. No case carries a key or a line's text.
public enum BindKeyFileError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file is not UTF-8 text.
    case notText
    /// Line N (from 1) does not parse.
    case line(Int, String)
    /// The file cannot be opened or read.
    case system(SystemError)
    /// Not a regular file.
    case notRegularFile
    /// Group or others may read or write it (the mode, octal).
    case tooOpen(mode: UInt32)
    /// Owned by another user than the agent's (or root).
    case foreignOwner(uid: UInt32, expected: UInt32)
    /// Larger than ``BindKeyFile/maximumBytes``.
    case tooLarge

    /// One sentence.
    public var description: String {
        switch self {
        case .notText: return "is not UTF-8 text"
        case .line(let number, let what): return "line \(number): \(what)"
        case .system(let error): return "\(error.operation): \(error.detail ?? error.errno.description)"
        case .notRegularFile: return "is not a regular file"
        case .tooOpen(let mode):
            return "group or others may access it (mode \(String(mode, radix: 8))): allow the owner only (chmod 600)"
        case .foreignOwner(let uid, let expected):
            return "is owned by uid \(uid), not by the agent's user (uid \(expected)) or root"
        case .tooLarge: return "is larger than \(BindKeyFile.maximumBytes) bytes"
        }
    }
}
