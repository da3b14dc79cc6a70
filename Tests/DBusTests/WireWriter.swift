/// Writes D-Bus messages in wire form by hand, in either byte order: the malformed and big-endian messages libdbus
/// will not build, for the wire reader's tests.
struct WireWriter {
    /// A header field.
    enum Field {
        case path(String)
        case interface(String)
        case member(String)
        case errorName(String)
        case replySerial(UInt32)
        case destination(String)
        case sender(String)
        case signature(String)
        case unixFDs(UInt32)
    }

    private(set) var bytes: [UInt8] = []
    let bigEndian: Bool

    init(bigEndian: Bool = false) { self.bigEndian = bigEndian }

    mutating func align(_ alignment: Int) {
        while bytes.count % alignment != 0 { bytes.append(0) }
    }

    mutating func bytes(_ data: [UInt8]) { bytes += data }

    mutating func byte(_ value: UInt8) { bytes.append(value) }

    mutating func uint16(_ value: UInt16) {
        align(2)
        let ordered = bigEndian ? value.bigEndian : value.littleEndian
        withUnsafeBytes(of: ordered) { bytes += $0 }
    }

    mutating func uint32(_ value: UInt32) {
        align(4)
        let ordered = bigEndian ? value.bigEndian : value.littleEndian
        withUnsafeBytes(of: ordered) { bytes += $0 }
    }

    mutating func uint64(_ value: UInt64) {
        align(8)
        let ordered = bigEndian ? value.bigEndian : value.littleEndian
        withUnsafeBytes(of: ordered) { bytes += $0 }
    }

    mutating func string(_ text: String) {
        uint32(UInt32(text.utf8.count))
        bytes += Array(text.utf8) + [0]
    }

    mutating func signature(_ text: String) {
        bytes.append(UInt8(text.utf8.count))
        bytes += Array(text.utf8) + [0]
    }

    /// An array whose elements `body` writes (aligned to `alignment`), with its length filled in.
    mutating func array(alignment: Int, _ body: (inout WireWriter) -> Void) {
        uint32(0)
        let lengthAt = bytes.count - 4
        align(alignment)
        let start = bytes.count
        var inner = WireWriter(bigEndian: bigEndian)
        inner.bytes = bytes
        body(&inner)
        bytes = inner.bytes
        let length = UInt32(bytes.count - start)
        let ordered = bigEndian ? length.bigEndian : length.littleEndian
        withUnsafeBytes(of: ordered) { bytes.replaceSubrange(lengthAt..<(lengthAt + 4), with: $0) }
    }

    /// A whole message: the fixed header, `fields`, a signature field unless `signature` is nil, and the body.
    static func message(
        bigEndian: Bool = false, type: UInt8, serial: UInt32, fields: [Field], signature: String?,
        body: (inout WireWriter) -> Void
    ) -> [UInt8] {
        var content = WireWriter(bigEndian: bigEndian)
        body(&content)
        var message = WireWriter(bigEndian: bigEndian)
        message.bytes = [UInt8(ascii: bigEndian ? "B" : "l"), type, 0, 1]
        message.uint32(UInt32(content.bytes.count))
        message.uint32(serial)
        message.array(alignment: 8) { array in
            for field in fields {
                array.align(8)
                switch field {
                case .path(let text): array.field(1, "o") { $0.string(text) }
                case .interface(let text): array.field(2, "s") { $0.string(text) }
                case .member(let text): array.field(3, "s") { $0.string(text) }
                case .errorName(let text): array.field(4, "s") { $0.string(text) }
                case .replySerial(let serial): array.field(5, "u") { $0.uint32(serial) }
                case .destination(let text): array.field(6, "s") { $0.string(text) }
                case .sender(let text): array.field(7, "s") { $0.string(text) }
                case .signature(let text): array.field(8, "g") { $0.signature(text) }
                case .unixFDs(let count): array.field(9, "u") { $0.uint32(count) }
                }
            }
            if let signature {
                array.align(8)
                array.field(8, "g") { $0.signature(signature) }
            }
        }
        message.align(8)
        return message.bytes + content.bytes
    }

    private mutating func field(_ code: UInt8, _ type: String, _ value: (inout WireWriter) -> Void) {
        byte(code)
        signature(type)
        value(&self)
    }
}
