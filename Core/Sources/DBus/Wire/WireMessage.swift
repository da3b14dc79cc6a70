import Glibc

/// A received message in wire form: its bytes, where its parts are (from its header, read and checked when the
/// message is made; the header's names go to the ``DBusMessage``) and the Unix file descriptors that travelled with
/// it, which it owns and closes when released.
final class WireMessage: Sendable {
    let bytes: [UInt8]
    let layout: WireHeader.Layout
    private let fds: [Int32]

    /// Reads the header of `bytes`, one complete message; takes ownership of `fds` (closed if it throws), which
    /// the body's `h` values index.
    static func read(_ bytes: [UInt8], fds: [Int32] = []) throws(DBusMarshalError) -> (WireMessage, WireHeader) {
        let header: WireHeader
        do {
            header = try Self.header(of: bytes)
        } catch {
            for fd in fds { _ = Glibc.close(fd) }
            throw error
        }
        return (WireMessage(bytes: bytes, layout: header.layout, fds: fds), header)
    }

    /// Wraps `bytes` whose header was read with ``header(of:)``; takes ownership of `fds`.
    init(bytes: [UInt8], layout: WireHeader.Layout, fds: [Int32]) {
        self.bytes = bytes
        self.layout = layout
        self.fds = fds
    }

    /// Reads and checks the header of `bytes`, one complete message.
    static func header(of bytes: [UInt8]) throws(DBusMarshalError) -> WireHeader {
        let parsed = bytes.withUnsafeBytes { buffer -> Result<WireHeader, DBusMarshalError> in
            guard let base = buffer.baseAddress, buffer.count >= WireHeader.fixedLength else {
                return .failure(.invalidMessage(reason: "shorter than a message header"))
            }
            let bytes = WireBytes(base: base, count: buffer.count, bigEndian: buffer[0] == UInt8(ascii: "B"))
            return Result { () throws(DBusMarshalError) in try WireHeader.parse(bytes) }
        }
        return try parsed.get()
    }

    /// A method return with no body: what a body reader reads when a message could not be put in wire form.
    static let empty = WireMessage(
        bytes: [
            UInt8(ascii: "l"), 2, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 8, 0, 0, 0,
            5, 1, UInt8(ascii: "u"), 0, 1, 0, 0, 0,
        ],
        layout: WireHeader.Layout(type: 2, bodyStart: 24, length: 24, signatureRange: 0..<0, unixFDs: 0), fds: [])

    deinit {
        for fd in fds { _ = Glibc.close(fd) }
    }

    /// Runs `body` over the message's bytes.
    func withBytes<R>(_ body: (WireBytes) -> R) -> R {
        bytes.withUnsafeBytes { buffer in
            // Non-empty: the header was read from these bytes.
            body(WireBytes(base: buffer.baseAddress!, count: buffer.count, bigEndian: buffer[0] == UInt8(ascii: "B")))
        }
    }

    /// The descriptor the body's `h` value `index` names, duplicated for the caller.
    func unixFD(at index: Int) throws(DBusMarshalError) -> UnixFD {
        guard index < fds.count else {
            throw .invalidMessage(reason: "file descriptor \(index) of \(fds.count)")
        }
        return try UnixFD.duplicating(fds[index])
    }

    /// The whole body as values.
    func arguments(_ signature: DBusSignature) throws(DBusMarshalError) -> [DBusValue] {
        let result = withBytes { bytes -> Result<[DBusValue], DBusMarshalError> in
            Result { () throws(DBusMarshalError) in
                var reader = WireValueReader(bytes: bytes, message: self, limit: layout.length)
                return try reader.body(signature, from: layout.bodyStart)
            }
        }
        return try result.get()
    }
}
