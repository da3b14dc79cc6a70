/// Why an advertisement of a known format was not decoded (the whole report
/// is dropped), or what part of it was not (the rest is kept). Each has a
/// stable `reason` code, which `gateway.stats` counts.
public enum DecodeFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// BTHome service data without the device information byte.
    case bthomeEmpty
    /// A BTHome version other than 2 in the device information byte.
    case bthomeVersion(UInt8)
    /// The device information byte says a MAC address follows, and it does not.
    case bthomeTruncatedMAC
    /// Encrypted BTHome data from a device with no bind key in the key file.
    case bthomeNoKey
    /// Encrypted BTHome data that does not open with the device's key (or is too short).
    case bthomeDecryption(String)
    /// Plain BTHome data from a device that has a bind key: refused, as
    /// Home Assistant does, so nobody can spoof an encrypted sensor in clear.
    case bthomeDowngrade
    /// Encrypted BTHome data whose counter is lower than the last accepted one (a replay).
    case bthomeCounterReplayed
    /// An object id BTHome does not define: the objects after it cannot be read.
    case bthomeUnknownObject(UInt8)
    /// An object runs past the end of the data: it and anything after are lost.
    case bthomeTruncatedObject(UInt8)
    /// Object ids not in ascending order (read anyway, as Home Assistant does).
    case bthomeObjectOrder
    /// A text object that is not UTF-8 (left out).
    case bthomeText
    /// iBeacon manufacturer data of the wrong length.
    case ibeaconLength(Int)
    /// An Eddystone frame of an unknown type (`0x00` UID, `0x10` URL, `0x20` TLM, `0x30` EID are known).
    case eddystoneFrame(UInt8)
    /// An Eddystone frame shorter or longer than its type allows.
    case eddystoneLength(UInt8, Int)
    /// An Eddystone URL whose scheme byte is not 0...3, or with a byte URLs may not use.
    case eddystoneURL
    /// An Eddystone TLM frame of a version other than 0 (1 is encrypted TLM, which needs the beacon's key).
    case eddystoneTLMVersion(UInt8)

    /// The stable code for counters: `bthome.no-key`, `eddystone.length`, ...
    public var reason: String {
        switch self {
        case .bthomeEmpty: "bthome.empty"
        case .bthomeVersion: "bthome.version"
        case .bthomeTruncatedMAC: "bthome.truncated-mac"
        case .bthomeNoKey: "bthome.no-key"
        case .bthomeDecryption: "bthome.decryption"
        case .bthomeDowngrade: "bthome.downgrade"
        case .bthomeCounterReplayed: "bthome.counter-replayed"
        case .bthomeUnknownObject: "bthome.unknown-object"
        case .bthomeTruncatedObject: "bthome.truncated-object"
        case .bthomeObjectOrder: "bthome.object-order"
        case .bthomeText: "bthome.text"
        case .ibeaconLength: "ibeacon.length"
        case .eddystoneFrame: "eddystone.frame"
        case .eddystoneLength: "eddystone.length"
        case .eddystoneURL: "eddystone.url"
        case .eddystoneTLMVersion: "eddystone.tlm-version"
        }
    }

    /// One sentence (never containing a key).
    public var description: String {
        switch self {
        case .bthomeEmpty: "BTHome service data is empty"
        case .bthomeVersion(let version): "BTHome version \(version) is not supported (only 2)"
        case .bthomeTruncatedMAC: "BTHome data announces a MAC address it does not hold"
        case .bthomeNoKey: "encrypted BTHome data, and the key file has no bind key for this device"
        case .bthomeDecryption(let why): "encrypted BTHome data does not decrypt: \(why)"
        case .bthomeDowngrade: "plain BTHome data from a device that has a bind key: refused"
        case .bthomeCounterReplayed: "encrypted BTHome data with an older counter: refused as a replay"
        case .bthomeUnknownObject(let id): "unknown BTHome object id \(hex(id)): the objects after it are lost"
        case .bthomeTruncatedObject(let id): "BTHome object \(hex(id)) is truncated"
        case .bthomeObjectOrder: "BTHome object ids are not in ascending order"
        case .bthomeText: "a BTHome text object is not UTF-8"
        case .ibeaconLength(let count): "iBeacon data of \(count) bytes (expected 23)"
        case .eddystoneFrame(let type): "unknown Eddystone frame type \(hex(type))"
        case .eddystoneLength(let type, let count): "Eddystone frame \(hex(type)) of \(count) bytes"
        case .eddystoneURL: "the Eddystone URL is malformed"
        case .eddystoneTLMVersion(let version): "Eddystone TLM version \(version) is not supported (only 0, plain)"
        }
    }
}

/// `0x3a`.
func hex(_ byte: UInt8) -> String {
    let digits = String(byte, radix: 16)
    return "0x" + (digits.count == 1 ? "0" + digits : digits)
}

/// Lower-case hex of `bytes`.
func hexString(_ bytes: some Sequence<UInt8>) -> String {
    let digits: [Character] = Array("0123456789abcdef")
    var text = ""
    for byte in bytes {
        text.append(digits[Int(byte >> 4)])
        text.append(digits[Int(byte & 0x0F)])
    }
    return text
}
