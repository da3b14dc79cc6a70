import DBus
import Glibc
import Synchronization

/// Objects and names shared by the tests.
enum Fixture {
    static let interface = "org.bleagent.Test"
    static let path: ObjectPath = { (try? ObjectPath("/org/bleagent/test")) ?? .root }()

    /// An interface whose methods echo, fail on request, or wait until told.
    static func testInterface(
        gate: Gate? = nil, started: Gate? = nil, log: Collector<Int32>? = nil
    ) throws
        -> ExportedInterface
    {
        try ExportedInterface(
            interface,
            methods: [
                ExportedMethod("EchoVariant", in: "v", out: "v") { call in try call.arguments() },
                ExportedMethod("EchoMany", in: "ybnqiuxtdsogay", out: "ybnqiuxtdsogay") { call in
                    try call.arguments()
                },
                ExportedMethod("Fail", in: "ss", out: "") { call in
                    let (name, message) = try call.decode(String.self, String.self)
                    throw DBusError(DBusError.Name(rawValue: name), message)
                },
                ExportedMethod("Sender", in: "", out: "s") { call in [.string(call.sender)] },
                ExportedMethod("Wait", in: "", out: "") { _ in
                    started?.open()
                    await gate?.wait()
                    return []
                },
                ExportedMethod("Record", in: "i", out: "") { call in
                    log?.append(try call.decode(Int32.self))
                    return []
                },
                ExportedMethod("ReadFD", in: "h", out: "ay") { call in
                    let (fd) = try call.decode(UnixFD.self)
                    return [.bytes(try readAll(fd))]
                },
            ])
    }

    static func readAll(_ fd: UnixFD) throws -> [UInt8] {
        guard let raw = fd.rawValue else { throw DBusError(.failed, "closed") }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 256)
        while true {
            let count = Glibc.read(raw, &buffer, buffer.count)
            if count <= 0 { break }
            bytes.append(contentsOf: buffer[0..<count])
        }
        return bytes
    }
}

/// A one-shot gate: tasks wait until it is opened.
final class Gate: Sendable {
    private let stream: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation

    init() { (stream, continuation) = AsyncStream.makeStream(of: Void.self) }

    func open() { continuation.finish() }

    func wait() async {
        for await _ in stream {}
    }
}

/// Collects values from tasks in a race-free way.
final class Collector<T: Sendable>: Sendable {
    private let state = Mutex<[T]>([])
    func append(_ value: T) { state.withLock { $0.append(value) } }
    var values: [T] { state.withLock { $0 } }
}
