/// Splits a byte stream into newline-terminated lines with a size limit.
///
/// A line longer than `maxLineBytes` (not counting the newline) yields one
/// ``Frame/oversized`` as soon as the limit is passed; the rest of that line,
/// up to and including its newline, is discarded, and framing resumes with the
/// next line. A trailing `\r` is removed; empty lines and lines of JSON
/// whitespace only (space, tab, CR) are skipped.
public struct LineFramer: Sendable {
    /// What the framer found in the bytes appended.
    public enum Frame: Sendable, Hashable {
        /// One complete line, without its newline.
        case line([UInt8])
        /// A line passed the limit and is being discarded.
        case oversized
    }

    /// The longest line accepted, in bytes.
    public let maxLineBytes: Int
    private var partial: [UInt8] = []
    private var discarding = false

    /// A framer accepting lines of at most `maxLineBytes` bytes.
    public init(maxLineBytes: Int) {
        self.maxLineBytes = maxLineBytes
    }

    /// The bytes of an unfinished line held so far.
    public var bufferedBytes: Int { partial.count }

    /// Whether a line has begun and not ended (held, or being discarded as oversized).
    public var hasPartialLine: Bool { !partial.isEmpty || discarding }

    /// Feeds bytes read from the stream and returns the frames they complete.
    public mutating func append(_ bytes: some Collection<UInt8>) -> [Frame] {
        var frames: [Frame] = []
        var rest = bytes[...]
        while !rest.isEmpty {
            let newline = rest.firstIndex(of: UInt8(ascii: "\n"))
            let chunk = rest[..<(newline ?? rest.endIndex)]
            if !discarding {
                partial.append(contentsOf: chunk)
                if partial.count > maxLineBytes {
                    partial = []
                    discarding = true
                    frames.append(.oversized)
                }
            }
            guard let newline else { break }
            if discarding {
                discarding = false
            } else {
                if partial.last == UInt8(ascii: "\r") { partial.removeLast() }
                if partial.contains(where: { !Self.isBlank($0) }) { frames.append(.line(partial)) }
                partial = []
            }
            rest = rest[rest.index(after: newline)...]
        }
        return frames
    }

    private static func isBlank(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r")
    }
}
