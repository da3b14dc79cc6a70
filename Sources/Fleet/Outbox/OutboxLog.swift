import JSON

/// One record waiting in the outbox: where it goes and the exact bytes
/// published (the envelope, serialized once when it was stored).
struct OutboxEntry: Sendable, Hashable {
    /// The outbox's sequence number, increasing across restarts.
    var seq: Int64
    /// The topic level under the prefix (`payments`).
    var stream: String
    /// The record's key.
    var key: String
    /// The published payload.
    var payload: [UInt8]
}

/// The outbox file's line format (docs/fleet.md, "The outbox file"). The
/// file is append-only between compactions; each line is one of
///
///     E <crc> <json>\n   a stored record: {"seq","stream","key","payload"}
///     A <seq>\n          the broker acknowledged record <seq>
///     N <seq>\n          the next sequence number (written by compaction)
///
/// where `<crc>` is the CRC-32 of the JSON text in eight hex digits. Reading
/// stops at the first line that is incomplete or fails its check: only the
/// tail can be torn (appends are synced before a record is acknowledged to
/// the plugin), and what follows a torn line was never acknowledged.
enum OutboxLog {
    /// What a file held.
    struct Contents: Sendable, Hashable {
        /// Records not acknowledged, in sequence order.
        var pending: [OutboxEntry] = []
        /// The next sequence number to hand out.
        var nextSeq: Int64 = 1
        /// The length of the good prefix (the rest is a torn tail).
        var validLength = 0
    }

    static func enqueueLine(_ entry: OutboxEntry) -> [UInt8] {
        let json: JSON = [
            "seq": .int(entry.seq), "stream": .string(entry.stream), "key": .string(entry.key),
            "payload": .string(String(decoding: entry.payload, as: UTF8.self)),
        ]
        let text = Array(json.serialized(.compact).utf8)
        return Array("E \(CRC32.hex(text)) ".utf8) + text + [0x0A]
    }

    static func ackLine(_ seq: Int64) -> [UInt8] { Array("A \(seq)\n".utf8) }

    static func nextLine(_ seq: Int64) -> [UInt8] { Array("N \(seq)\n".utf8) }

    /// Replays a file's bytes.
    static func decode(_ bytes: [UInt8]) -> Contents {
        var contents = Contents()
        var pending: [Int64: OutboxEntry] = [:]
        var start = 0
        while start < bytes.count, let newline = bytes[start...].firstIndex(of: 0x0A) {
            let line = bytes[start..<newline]
            guard apply(line, to: &pending, nextSeq: &contents.nextSeq) else { break }
            start = newline + 1
            contents.validLength = start
        }
        contents.pending = pending.values.sorted { $0.seq < $1.seq }
        return contents
    }

    private static func apply(
        _ line: ArraySlice<UInt8>, to pending: inout [Int64: OutboxEntry], nextSeq: inout Int64
    )
        -> Bool
    {
        guard line.count >= 3, line[line.startIndex + 1] == 0x20 else { return false }
        let body = line.dropFirst(2)
        switch line.first {
        case UInt8(ascii: "A"):
            guard let seq = Int64(String(decoding: body, as: UTF8.self)) else { return false }
            pending[seq] = nil
        case UInt8(ascii: "N"):
            guard let seq = Int64(String(decoding: body, as: UTF8.self)), seq > 0 else { return false }
            nextSeq = max(nextSeq, seq)
        case UInt8(ascii: "E"):
            guard body.count > 9, body[body.startIndex + 8] == 0x20 else { return false }
            let text = body.dropFirst(9)
            guard String(decoding: body.prefix(8), as: UTF8.self) == CRC32.hex(text),
                let json = try? JSON(parsing: text), let seq = json["seq"]?.intValue,
                let stream = json["stream"]?.stringValue, let key = json["key"]?.stringValue,
                let payload = json["payload"]?.stringValue
            else { return false }
            pending[seq] = OutboxEntry(seq: seq, stream: stream, key: key, payload: Array(payload.utf8))
            nextSeq = max(nextSeq, seq + 1)
        default:
            return false
        }
        return true
    }
}

/// CRC-32 (IEEE 802.3, as zlib computes it), table-driven.
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        (0..<8).reduce(UInt32(index)) { crc, _ in crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
    }

    /// The checksum of `bytes`.
    static func checksum(_ bytes: some Sequence<UInt8>) -> UInt32 {
        ~bytes.reduce(~UInt32(0)) { crc, byte in table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
    }

    /// The checksum in eight lower-case hex digits.
    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        let text = String(checksum(bytes), radix: 16)
        return String(repeating: "0", count: 8 - text.count) + text
    }
}
