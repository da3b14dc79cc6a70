/// The framing of encrypted BTHome v2 service data (bthome.io, "Encryption"):
///
/// ```
/// 41                     device information: version 2, encrypted (bit 0)
/// [6 bytes]              the MAC address, reversed, when bit 1 is set
/// a4 72 66 c9 5f 73      the objects, AES-CCM encrypted
/// 00 11 22 33            counter, uint32 little-endian (must increase)
/// b7 ce d8 e5            MIC: the 4-byte CCM tag
/// ```
///
/// The nonce is the MAC address (6 bytes, as written), the UUID 0xFCD2
/// little-endian (`d2 fc`), the device information byte and the counter
/// bytes: 13 bytes.
public enum BTHomeEncryption {
    /// The counter and MIC that follow the ciphertext.
    public static let trailerLength = 8

    /// The 13-byte nonce for `mac` (6 bytes, most significant first), the
    /// device information byte and the counter.
    public static func nonce(mac: [UInt8], deviceInfo: UInt8, counter: UInt32) -> [UInt8] {
        mac + [0xD2, 0xFC, deviceInfo] + counter.littleEndianBytes
    }

    /// Encrypts `objects` (plain BTHome objects) as device `mac` (6 bytes)
    /// would with `key` and `counter`, and returns the service data bytes
    /// after the UUID. Bit 0 of `deviceInfo` is set; with `includeMAC` the
    /// reversed address follows the device information byte (bit 1).
    public static func seal(
        objects: [UInt8], deviceInfo: UInt8, mac: [UInt8], counter: UInt32, key: BTHomeBindKey,
        includeMAC: Bool = false
    ) throws(AESCCMError) -> [UInt8] {
        guard mac.count == 6 else { throw .badLength("MAC address", mac.count) }
        let info = deviceInfo | 0x01 | (includeMAC ? 0x02 : 0)
        let sealed = try AESCCM.seal(
            key: key.bytes, nonce: nonce(mac: mac, deviceInfo: info, counter: counter), plaintext: objects,
            tagLength: 4)
        return [info] + (includeMAC ? Array(mac.reversed()) : []) + sealed.ciphertext + counter.littleEndianBytes
            + sealed.tag
    }

    /// Checks and decrypts encrypted service data (the bytes after the UUID,
    /// device information byte first) from the device at `address` (6
    /// bytes, most significant first; the MAC in the data wins when bit 1 is
    /// set). Returns the plain objects and the counter.
    public static func open(
        serviceData: [UInt8], address: [UInt8], key: BTHomeBindKey
    ) throws(BTHomeDecryptionError) -> (objects: [UInt8], counter: UInt32) {
        guard let info = serviceData.first, info & 0x01 != 0 else { throw .notEncrypted }
        let macLength = info & 0x02 != 0 ? 6 : 0
        // At least one object byte, then counter and MIC.
        guard serviceData.count >= 1 + macLength + 1 + trailerLength else { throw .tooShort(serviceData.count) }
        let mac = macLength > 0 ? Array(serviceData[1...6].reversed()) : address
        guard mac.count == 6 else { throw .noAddress }
        let end = serviceData.count
        let ciphertext = Array(serviceData[(1 + macLength)..<(end - trailerLength)])
        let counterBytes = serviceData[(end - 8)..<(end - 4)]
        let counter = counterBytes.reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        let tag = Array(serviceData[(end - 4)...])
        do {
            let objects = try AESCCM.open(
                key: key.bytes, nonce: nonce(mac: mac, deviceInfo: info, counter: counter), ciphertext: ciphertext,
                tag: tag)
            return (objects, counter)
        } catch .authenticationFailed {
            throw .authenticationFailed
        } catch {
            throw .libcrypto
        }
    }
}

/// Why encrypted BTHome data could not be opened.
public enum BTHomeDecryptionError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Bit 0 of the device information byte is clear.
    case notEncrypted
    /// Fewer bytes than device information, one object byte, counter and MIC.
    case tooShort(Int)
    /// No 6-byte address to build the nonce from.
    case noAddress
    /// The MIC does not match: a wrong bind key, or altered data.
    case authenticationFailed
    /// libcrypto refused a step.
    case libcrypto

    /// One sentence.
    public var description: String {
        switch self {
        case .notEncrypted: "the data is not encrypted"
        case .tooShort(let count): "\(count) bytes are too few for encrypted BTHome data"
        case .noAddress: "no device address for the nonce"
        case .authenticationFailed: "the MIC does not match (wrong bind key, or altered data)"
        case .libcrypto: "libcrypto refused to decrypt"
        }
    }
}

extension UInt32 {
    fileprivate var littleEndianBytes: [UInt8] {
        [
            UInt8(truncatingIfNeeded: self), UInt8(truncatingIfNeeded: self >> 8),
            UInt8(truncatingIfNeeded: self >> 16),
            UInt8(truncatingIfNeeded: self >> 24),
        ]
    }
}
