/// A read-only view of one message in D-Bus wire form: every read names an absolute offset from the message's first
/// byte (alignment in the wire format is counted from there), checks it against a limit the caller gives, and
/// converts from the message's byte order. Nothing here trusts a length it read: a read that would leave the limit
/// returns nil.
struct WireBytes {
    /// The message's first byte.
    let base: UnsafeRawPointer
    /// The message's length in bytes.
    let count: Int
    /// Whether the message is big-endian (`B`); otherwise little-endian (`l`).
    let bigEndian: Bool

    /// The largest array the format allows (64 MiB).
    static let maximumArrayLength = 1 << 26
    /// The largest message the format allows (128 MiB).
    static let maximumMessageLength = 1 << 27
    /// The deepest nesting of containers (arrays, structures, dict entries and variants together) the format allows.
    static let maximumDepth = 64

    /// `offset` rounded up to a multiple of `alignment` (a power of two).
    @inline(__always)
    static func align(_ offset: Int, _ alignment: Int) -> Int { (offset + alignment - 1) & ~(alignment - 1) }

    @inline(__always)
    func byte(_ offset: Int) -> UInt8 { base.load(fromByteOffset: offset, as: UInt8.self) }

    @inline(__always)
    func uint16(_ offset: Int) -> UInt16 {
        let raw = base.loadUnaligned(fromByteOffset: offset, as: UInt16.self)
        return bigEndian ? UInt16(bigEndian: raw) : UInt16(littleEndian: raw)
    }

    @inline(__always)
    func uint32(_ offset: Int) -> UInt32 {
        let raw = base.loadUnaligned(fromByteOffset: offset, as: UInt32.self)
        return bigEndian ? UInt32(bigEndian: raw) : UInt32(littleEndian: raw)
    }

    @inline(__always)
    func uint64(_ offset: Int) -> UInt64 {
        let raw = base.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
        return bigEndian ? UInt64(bigEndian: raw) : UInt64(littleEndian: raw)
    }

    /// The 32-bit length at `offset` (aligned to 4 first), if it and the bytes it counts, plus a NUL, fit before
    /// `limit`: the range of the text (without its NUL) of a string or object path.
    func stringRange(at offset: Int, limit: Int) -> Range<Int>? {
        let start = WireBytes.align(offset, 4)
        guard start + 4 <= limit else { return nil }
        let length = Int(uint32(start))
        let text = start + 4
        guard length < limit - text, byte(text + length) == 0 else { return nil }
        return text..<(text + length)
    }

    /// The range of the text of a signature (`g`, an 8-bit length) at `offset`, as for ``stringRange(at:limit:)``.
    func signatureRange(at offset: Int, limit: Int) -> Range<Int>? {
        guard offset + 1 <= limit else { return nil }
        let length = Int(byte(offset))
        let text = offset + 1
        guard length < limit - text, byte(text + length) == 0 else { return nil }
        return text..<(text + length)
    }

    /// The bytes in `range` as a buffer.
    func buffer(_ range: Range<Int>) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: base + range.lowerBound, count: range.count)
    }

    /// The text in `range` as a string, if it is valid UTF-8 without NUL bytes (the format's rule for strings).
    func text(_ range: Range<Int>) -> String? {
        let bytes = buffer(range)
        guard !bytes.contains(0) else { return nil }
        return String(validating: bytes, as: UTF8.self)
    }

    /// The text in `range`, shared from `table` when it has it, else as ``text(_:)``.
    func text(_ range: Range<Int>, in table: DBusNameTable) -> String? {
        let pointer = (base + range.lowerBound).assumingMemoryBound(to: CChar.self)
        return table.name(pointer, count: range.count) ?? text(range)
    }
}
