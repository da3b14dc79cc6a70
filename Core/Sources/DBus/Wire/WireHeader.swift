/// The header of one message in wire form, read and checked as a whole: byte order, type, version, lengths within
/// the format's limits, every header field of the type and with the value syntax the specification gives it, the
/// fields each message type requires, and the body's signature.
///
/// The body is not walked here: it is checked as it is read (``DBusBodyReader``, ``WireValueReader``), each value
/// against the signature, the bounds and the syntax of its type, so a malformed body is a decoding error of the
/// message that carries it, found by whoever reads it (the same division as sd-bus makes).
struct WireHeader {
    /// The message type (1 method call, 2 method return, 3 error, 4 signal; others are to be ignored).
    var type: UInt8
    var flags: UInt8
    var serial: UInt32
    var replySerial: UInt32 = 0
    var path: String?
    var interface: String?
    var member: String?
    var errorName: String?
    var destination: String?
    var sender: String?
    /// The body's signature and where its bytes are in the message.
    var signature = ""
    var signatureRange = 0..<0
    /// The number of Unix file descriptors that travel with the message.
    var unixFDs = 0
    /// Where the body starts (a multiple of 8) and the message's whole length.
    var bodyStart = 0
    var length = 0

    /// Where a message's parts are: what reading its body needs once the header's names are taken.
    struct Layout: Sendable {
        var type: UInt8
        var bodyStart: Int
        var length: Int
        var signatureRange: Range<Int>
        var unixFDs: Int
    }

    /// The message's layout.
    var layout: Layout {
        Layout(
            type: type, bodyStart: bodyStart, length: length, signatureRange: signatureRange, unixFDs: unixFDs)
    }

    /// The fixed part every message starts with.
    static let fixedLength = 16
    /// The `NO_REPLY_EXPECTED` flag.
    static let noReplyExpected: UInt8 = 0x1

    /// The path and interface libdbus reserves for messages a connection makes for itself (`Disconnected`);
    /// never accepted from a peer.
    private static let localPath = "/org/freedesktop/DBus/Local"
    private static let localInterface = "org.freedesktop.DBus.Local"

    /// The whole length of the message whose first ``fixedLength`` bytes are `prefix`, or a reason it cannot be one.
    static func messageLength(_ prefix: UnsafeRawBufferPointer) -> Result<Int, DBusMarshalError> {
        guard prefix.count >= fixedLength, let base = prefix.baseAddress else {
            return .failure(.invalidMessage(reason: "shorter than a message header"))
        }
        let order = prefix[0]
        guard order == UInt8(ascii: "l") || order == UInt8(ascii: "B") else {
            return .failure(.invalidMessage(reason: "byte order \(order) is neither 'l' nor 'B'"))
        }
        guard prefix[3] == 1 else { return .failure(.invalidMessage(reason: "protocol version \(prefix[3]), not 1")) }
        let bytes = WireBytes(base: base, count: prefix.count, bigEndian: order == UInt8(ascii: "B"))
        let bodyLength = Int(bytes.uint32(4))
        let fieldsLength = Int(bytes.uint32(12))
        guard fieldsLength <= WireBytes.maximumArrayLength else {
            return .failure(.invalidMessage(reason: "header fields of \(fieldsLength) bytes"))
        }
        let length = WireBytes.align(fixedLength + fieldsLength, 8) + bodyLength
        guard length <= WireBytes.maximumMessageLength else {
            return .failure(.invalidMessage(reason: "a message of \(length) bytes exceeds the 128 MiB limit"))
        }
        return .success(length)
    }

    /// Reads the header of the complete message `bytes`.
    static func parse(_ bytes: WireBytes) throws(DBusMarshalError) -> WireHeader {
        let length = try messageLength(UnsafeRawBufferPointer(start: bytes.base, count: bytes.count)).get()
        guard length == bytes.count else {
            throw .invalidMessage(reason: "\(bytes.count) bytes for a message of \(length)")
        }
        let type = bytes.byte(1)
        guard type != 0 else { throw .invalidMessage(reason: "message type 0") }
        var header = WireHeader(type: type, flags: bytes.byte(2), serial: bytes.uint32(8))
        guard header.serial != 0 else { throw .invalidMessage(reason: "serial 0") }
        header.length = length
        let fieldsEnd = fixedLength + Int(bytes.uint32(12))
        header.bodyStart = WireBytes.align(fieldsEnd, 8)
        for offset in fieldsEnd..<header.bodyStart where bytes.byte(offset) != 0 {
            throw .invalidMessage(reason: "header padding is not zero")
        }
        try header.readFields(bytes, end: fieldsEnd)
        try header.checkRequiredFields(bytes)
        return header
    }

    private mutating func readFields(_ bytes: WireBytes, end: Int) throws(DBusMarshalError) {
        var seen: UInt16 = 0
        var offset = Self.fixedLength
        while offset < end {
            offset = WireBytes.align(offset, 8)
            guard offset < end else { throw .invalidMessage(reason: "header fields end in padding") }
            let code = bytes.byte(offset)
            guard let signature = bytes.signatureRange(at: offset + 1, limit: end),
                WireSignature.isSingleCompleteType(bytes, signature)
            else { throw .invalidMessage(reason: "header field \(code) has no valid type") }
            if code >= 1 && code <= 9 {
                guard seen & (1 << code) == 0 else {
                    throw .invalidMessage(reason: "header field \(code) appears twice")
                }
                seen |= 1 << code
            }
            offset = try readField(code, bytes, type: signature, value: signature.upperBound + 1, end: end)
        }
    }

    /// Reads one field's value; returns where it ends.
    private mutating func readField(
        _ code: UInt8, _ bytes: WireBytes, type: Range<Int>, value: Int, end: Int
    ) throws(DBusMarshalError) -> Int {
        let typeCode = type.count == 1 ? bytes.byte(type.lowerBound) : 0
        func expect(_ expected: Unicode.Scalar) throws(DBusMarshalError) {
            guard typeCode == UInt8(ascii: expected) else {
                throw .invalidMessage(reason: "header field \(code) is not of type \(expected)")
            }
        }
        func name(
            _ check: (UnsafeRawBufferPointer) -> Bool, _ what: String
        ) throws(DBusMarshalError) -> (
            String, Int
        ) {
            guard let range = bytes.stringRange(at: value, limit: end), check(bytes.buffer(range)),
                let text = bytes.text(range, in: .standard)
            else { throw .invalidMessage(reason: "invalid \(what) in the header") }
            return (text, range.upperBound + 1)
        }
        switch code {
        case 1:
            try expect("o")
            guard let range = bytes.stringRange(at: value, limit: end), WireNames.isObjectPath(bytes.buffer(range))
            else { throw .invalidMessage(reason: "invalid object path in the header") }
            path = bytes.text(range)
            guard path != Self.localPath else { throw .invalidMessage(reason: "the reserved local path") }
            return range.upperBound + 1
        case 2:
            try expect("s")
            let (text, next) = try name(WireNames.isInterface, "interface")
            guard text != Self.localInterface else { throw .invalidMessage(reason: "the reserved local interface") }
            interface = text
            return next
        case 3:
            try expect("s")
            let (text, next) = try name(WireNames.isMember, "member")
            member = text
            return next
        case 4:
            try expect("s")
            let (text, next) = try name(WireNames.isInterface, "error name")
            errorName = text
            return next
        case 5, 9:
            try expect("u")
            let start = WireBytes.align(value, 4)
            guard start + 4 <= end else { throw .invalidMessage(reason: "header field \(code) is truncated") }
            if code == 5 {
                replySerial = bytes.uint32(start)
                guard replySerial != 0 else { throw .invalidMessage(reason: "reply serial 0") }
            } else {
                unixFDs = Int(bytes.uint32(start))
            }
            return start + 4
        case 6, 7:
            try expect("s")
            let (text, next) = try name(WireNames.isBusName, code == 6 ? "destination" : "sender")
            if code == 6 { destination = text } else { sender = text }
            return next
        case 8:
            try expect("g")
            guard let range = bytes.signatureRange(at: value, limit: end), WireSignature.isValid(bytes, range),
                let text = bytes.text(range, in: .signatures)
            else { throw .invalidMessage(reason: "invalid body signature in the header") }
            signature = text
            signatureRange = range
            return range.upperBound + 1
        case 0:
            throw .invalidMessage(reason: "header field code 0")
        default:
            // A field this version does not know: skipped, as the specification asks.
            guard let next = WireValueSkipper.end(bytes, type: type.lowerBound, at: value, limit: end, depth: 1) else {
                throw .invalidMessage(reason: "header field \(code) is malformed")
            }
            return next
        }
    }

    private func checkRequiredFields(_ bytes: WireBytes) throws(DBusMarshalError) {
        let missing: String? =
            switch type {
            case 1: path == nil ? "path" : member == nil ? "member" : nil
            case 2: replySerial == 0 ? "reply serial" : nil
            case 3: errorName == nil ? "error name" : replySerial == 0 ? "reply serial" : nil
            case 4: path == nil ? "path" : interface == nil ? "interface" : member == nil ? "member" : nil
            default: nil
            }
        if let missing { throw .invalidMessage(reason: "message type \(type) without a \(missing)") }
        if signatureRange.isEmpty && length > bodyStart {
            throw .invalidMessage(reason: "a body without a signature")
        }
    }
}
