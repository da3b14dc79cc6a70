import DBus
import Glibc
import IO
import Synchronization
import Testing

/// The connection's own socket reader against a peer that is not a bus and writes as it likes: a message in
/// single bytes, one with a file descriptor, then bytes that are not D-Bus.
@Suite("A connection's socket reader against a raw peer")
struct WireTransportTests {
    @Test(
        "a call written one byte at a time and one carrying a file descriptor are answered; bytes that are not D-Bus close the connection and fail what is pending"
    )
    func rawPeer() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/peer.sock"
        let peer = try RawPeer(path: path)
        let connection = try await DBusConnection.connect(address: "unix:path=\(path)", registerOnBus: false)
        try connection.objects.export(Fixture.path, interfaces: [Fixture.testInterface()])
        #expect(connection.canPassUnixFDs)
        // The peer calls once it hears that the object is there.
        try connection.emitSignal(path: Fixture.path, interface: Fixture.interface, member: "Ready")

        let outcome = await peer.finished()
        #expect(outcome.replies == ["one", "fd-ok"], "\(outcome)")
        #expect(outcome.error == nil, "\(outcome)")
        // The connection saw the garbage and hung up (the peer read its end of stream); it then finishes closing.
        #expect(outcome.sawEndOfStream)
        let deadline = ContinuousClock.now + .seconds(30)
        while !connection.isClosed && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(connection.isClosed)
        #expect(connection.closeReason?.contains("byte order") == true, "\(connection.closeReason ?? "no reason")")
        await #expect(throws: DBusError.self) {
            _ = try await connection.call(
                destination: nil, path: Fixture.path, interface: Fixture.interface, member: "Sender")
        }
    }
}

extension WireTransportTests {
    @Test(
        "after a read that brought only signals, what comes within the read interval is read when it is over; a reply awaited is read at once; a hang-up ends the connection"
    )
    func readingIsPacedAfterSignals() async throws {
        let interval = Duration.seconds(4)
        let directory = try TemporaryDirectory()
        let path = directory.path + "/peer.sock"
        let peer = try RawPeer(path: path, name: "pacing-peer", serve: PacingPeer.serve)
        let connection = try await DBusConnection.connect(
            address: "unix:path=\(path)", registerOnBus: false, readInterval: interval)
        let (ticks, tick) = AsyncStream.makeStream(of: (Int64, ContinuousClock.Instant).self)
        let handler = try await connection.handleSignals(MatchRule(interface: Fixture.interface, member: "Tick")) {
            signal in
            if case .int64(let number)? = try? signal.arguments().first { tick.yield((number, .now)) }
        }
        defer { handler.cancel() }
        var arrivals = ticks.makeAsyncIterator()
        try connection.emitSignal(path: Fixture.path, interface: Fixture.interface, member: "Ready")

        // Tick 1 is read alone; tick 2, sent once tick 1 is here, waits for the end of the interval.
        let first = await arrivals.next()
        #expect(first?.0 == 1)
        try connection.emitSignal(path: Fixture.path, interface: Fixture.interface, member: "Go")
        let second = await arrivals.next()
        #expect(second?.0 == 2)
        if let first, let second { #expect(second.1 - first.1 >= interval - .milliseconds(1)) }
        #expect(connection.readStatistics.paced >= 1)

        // Right after tick 2's read, a call: its reply is read at once, not at the end of the interval.
        let asked = ContinuousClock.now
        let reply = try await connection.call(
            destination: nil, path: Fixture.path, interface: Fixture.interface, member: "Ping")
        #expect(reply.kind == .methodReturn)
        #expect(ContinuousClock.now - asked < interval / 2, "the reply waited for the read interval")

        // Tick 3 is read alone; the peer then hangs up, which ends the connection.
        try connection.emitSignal(path: Fixture.path, interface: Fixture.interface, member: "Go")
        #expect(await arrivals.next()?.0 == 3)
        try connection.emitSignal(path: Fixture.path, interface: Fixture.interface, member: "Go")
        let deadline = ContinuousClock.now + .seconds(60)
        while !connection.isClosed && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(connection.isClosed)
        #expect(connection.closeReason == "the peer closed the connection")
        let outcome = await peer.finished()
        #expect(outcome.error == nil, "\(outcome)")
    }
}

/// A peer that writes signals when told: waits for the client's `Ready`, sends `Tick(1)`, waits for `Go`, sends
/// `Tick(2)`, answers the client's `Ping`, waits for `Go`, sends `Tick(3)`, waits for `Go` and hangs up. It answers
/// the `AddMatch` calls a subscription makes as a bus would.
private enum PacingPeer {
    /// The script, on the peer's thread (see ``RawPeer/init(path:name:serve:)``).
    fileprivate static func serve(_ listener: Int32, _ outcome: inout RawPeer.Outcome) throws {
        let client = try RawPeer.accept(listener)
        defer { close(client) }
        var patience = timeval(tv_sec: 60, tv_usec: 0)
        _ = setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &patience, socklen_t(MemoryLayout<timeval>.size))
        try RawPeer.authenticate(client)
        var serial: UInt32 = 1
        func tick(_ number: Int64) throws {
            serial += 1
            let message = try DBusMessage.signal(
                path: Fixture.path, interface: Fixture.interface, member: "Tick", arguments: [.int64(number)])
            try RawPeer.write(client, message.wireBytes(serial: serial))
        }
        /// Reads up to the message named `member`, answering calls to the bus on the way; returns it.
        func readUntil(_ member: String) throws -> DBusMessage {
            while true {
                let message = try RawPeer.readMessage(client)
                if message.member == member { return message }
                guard message.kind == .methodCall, message.destination == "org.freedesktop.DBus" else {
                    throw DBusError(.failed, "expected \(member), got \(message)")
                }
                try answer(message)
            }
        }
        func answer(_ call: DBusMessage) throws {
            serial += 1
            let reply = WireWriter.message(
                type: 2, serial: serial, fields: [.replySerial(call.serial)], signature: nil, body: { _ in })
            try RawPeer.write(client, reply)
        }
        _ = try readUntil("Ready")
        try tick(1)
        _ = try readUntil("Go")
        try tick(2)
        try answer(try readUntil("Ping"))
        _ = try readUntil("Go")
        try tick(3)
        _ = try readUntil("Go")
    }
}

/// A temporary directory removed when released.
private final class TemporaryDirectory: Sendable {
    let path: String

    init() throws {
        var template = Array("/tmp/bleagent-wire-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw DBusError(.failed, "mkdtemp failed") }
        path = String(cString: made)
    }

    deinit {
        _ = unlink(path + "/peer.sock")
        _ = rmdir(path)
    }
}

/// A peer on a Unix socket, on a thread of its own with blocking I/O: accepts one client, authenticates it (EXTERNAL,
/// descriptors agreed), waits for the client's `Ready` signal, then calls `EchoVariant` written one byte at a time, `ReadFD` with a pipe whose other end
/// holds `fd-ok`, reads both replies, writes 16 bytes that are not a message and reads until the client hangs up.
private final class RawPeer: Sendable {
    struct Outcome: Sendable {
        var replies: [String] = []
        var sawEndOfStream = false
        var error: String?
    }

    private let result = Mutex<Outcome?>(nil)
    private let done: AsyncStream<Void>
    private let signal: AsyncStream<Void>.Continuation

    /// A peer listening at `path` that runs `serve` (this peer's own script by default) on a thread of its own.
    init(
        path: String, name: String = "raw-peer",
        serve: @escaping @Sendable (Int32, inout Outcome) throws -> Void = RawPeer.serve
    ) throws {
        (done, signal) = AsyncStream.makeStream(of: Void.self)
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        try UnixSocket.bind(FileDescriptor(rawValue: listener), to: path)
        guard listen(listener, 1) == 0 else { throw DBusError(.failed, "listen failed") }
        try IOThread.spawn(name: name) { [self] in
            var outcome = Outcome()
            do {
                try serve(listener, &outcome)
            } catch {
                outcome.error = "\(error)"
            }
            close(listener)
            result.withLock { $0 = outcome }
            signal.finish()
        }
    }

    /// Waits for a client on `listener` and returns its socket, blocking and close-on-exec. Every descriptor of
    /// the peer is close-on-exec: a child another test spawns meanwhile would otherwise hold a copy, and the
    /// peer's hang-up would not reach the client until that child exits.
    static func accept(_ listener: Int32) throws -> Int32 {
        guard let client = try FileDescriptor(rawValue: listener).accept() else {
            throw DBusError(.failed, "accept found no client")
        }
        try client.setNonBlocking(false)
        return client.rawValue
    }

    /// What the peer saw, once it is done.
    func finished() async -> Outcome {
        for await _ in done {}
        return result.withLock { $0 } ?? Outcome(error: "no outcome")
    }

    fileprivate static func serve(_ listener: Int32, _ outcome: inout Outcome) throws {
        let client = try RawPeer.accept(listener)
        defer { close(client) }
        // A client that never answers fails the test after 30 s instead of hanging it.
        var patience = timeval(tv_sec: 30, tv_usec: 0)
        _ = setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &patience, socklen_t(MemoryLayout<timeval>.size))
        try authenticate(client)
        let ready = try readMessage(client)
        guard ready.member == "Ready" else { throw DBusError(.failed, "expected Ready, got \(ready)") }

        let echo = try DBusMessage.methodCall(
            destination: nil, path: Fixture.path, interface: Fixture.interface, member: "EchoVariant",
            arguments: [.variant(.string("one"))]
        ).wireBytes(serial: 1)
        for byte in echo { try write(client, [byte]) }
        outcome.replies.append(try replyText(readMessage(client)))

        let (pipeRead, pipeWrite) = try FileDescriptor.pipe()
        try write(pipeWrite.rawValue, Array("fd-ok".utf8))
        pipeWrite.close()
        let readFD = WireWriter.message(
            type: 1, serial: 2,
            fields: [
                .path(Fixture.path.rawValue), .interface(Fixture.interface), .member("ReadFD"), .signature("h"),
                .unixFDs(1),
            ],
            signature: nil, body: { $0.uint32(0) })
        try sendWithDescriptor(client, readFD, pipeRead.rawValue)
        pipeRead.close()
        outcome.replies.append(try replyText(readMessage(client)))

        try write(client, Array(repeating: UInt8(ascii: "x"), count: 16))
        var byte: UInt8 = 0
        while true {
            let count = read(client, &byte, 1)
            if count == 0 { break }
            guard count > 0 else { throw DBusError(.failed, "read failed after the garbage: errno \(errno)") }
        }
        outcome.sawEndOfStream = true
    }

    /// The server side of the SASL exchange libdbus's client starts: a NUL, `AUTH EXTERNAL <uid>`,
    /// `NEGOTIATE_UNIX_FD`, `BEGIN`.
    fileprivate static func authenticate(_ fd: Int32) throws {
        while true {
            var line = try readLine(fd)
            while line.first == 0 { line.removeFirst() }
            let text = String(decoding: line, as: UTF8.self)
            if text.hasPrefix("AUTH") {
                try write(fd, Array("OK 0123456789abcdef0123456789abcdef\r\n".utf8))
            } else if text == "NEGOTIATE_UNIX_FD" {
                try write(fd, Array("AGREE_UNIX_FD\r\n".utf8))
            } else if text == "BEGIN" {
                return
            } else {
                try write(fd, Array("ERROR\r\n".utf8))
            }
        }
    }

    fileprivate static func readLine(_ fd: Int32) throws -> [UInt8] {
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while !(line.count >= 2 && line[line.count - 2] == 13 && line[line.count - 1] == 10) {
            guard read(fd, &byte, 1) == 1 else { throw DBusError(.failed, "the client hung up while authenticating") }
            line.append(byte)
        }
        return Array(line.dropLast(2))
    }

    fileprivate static func readExactly(_ fd: Int32, _ count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let got = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, count - filled) }
            guard got > 0 else { throw DBusError(.failed, "the client hung up mid-message") }
            filled += got
        }
        return bytes
    }

    /// One whole little-endian message from the client.
    fileprivate static func readMessage(_ fd: Int32) throws -> DBusMessage {
        let fixed = try readExactly(fd, 16)
        func word(_ offset: Int) -> Int { fixed[offset..<(offset + 4)].reversed().reduce(0) { $0 << 8 | Int($1) } }
        let length = ((16 + word(12) + 7) & ~7) + word(4)
        return try DBusMessage(wireBytes: fixed + readExactly(fd, length - 16))
    }

    private static func replyText(_ message: DBusMessage) throws -> String {
        guard message.kind == .methodReturn else { throw DBusError(.failed, "not a reply: \(message)") }
        switch try message.arguments().first {
        case .variant(.string(let text))?: return text
        case .bytes(let bytes)?: return String(decoding: bytes, as: UTF8.self)
        default: throw DBusError(.failed, "unexpected reply \(message)")
        }
    }

    fileprivate static func write(_ fd: Int32, _ bytes: [UInt8]) throws {
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        guard written == bytes.count else { throw DBusError(.failed, "short write") }
    }

    /// `bytes` in one sendmsg with `descriptor` attached (SCM_RIGHTS).
    private static func sendWithDescriptor(_ fd: Int32, _ bytes: [UInt8], _ descriptor: Int32) throws {
        // struct cmsghdr { size_t cmsg_len; int cmsg_level; int cmsg_type; } followed by one int, padded to 8.
        let headerLength = MemoryLayout<Int>.size + 2 * MemoryLayout<Int32>.size
        var control = [UInt8](repeating: 0, count: headerLength + 8)
        control.withUnsafeMutableBytes { raw in
            raw.storeBytes(of: headerLength + MemoryLayout<Int32>.size, toByteOffset: 0, as: Int.self)
            raw.storeBytes(of: SOL_SOCKET, toByteOffset: MemoryLayout<Int>.size, as: Int32.self)
            raw.storeBytes(
                of: Int32(SCM_RIGHTS), toByteOffset: MemoryLayout<Int>.size + MemoryLayout<Int32>.size, as: Int32.self)
            raw.storeBytes(of: descriptor, toByteOffset: headerLength, as: Int32.self)
        }
        var payload = bytes
        let sent = payload.withUnsafeMutableBytes { data in
            control.withUnsafeMutableBytes { controlBytes in
                var vector = iovec(iov_base: data.baseAddress, iov_len: data.count)
                return withUnsafeMutablePointer(to: &vector) { vectorPointer in
                    var header = msghdr()
                    header.msg_iov = vectorPointer
                    header.msg_iovlen = 1
                    header.msg_control = controlBytes.baseAddress
                    header.msg_controllen = controlBytes.count
                    return sendmsg(fd, &header, 0)
                }
            }
        }
        guard sent == bytes.count else { throw DBusError(.failed, "sendmsg failed: errno \(errno)") }
    }
}
