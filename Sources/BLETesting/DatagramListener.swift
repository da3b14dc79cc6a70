import IO
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A datagram socket bound to a fresh abstract address (standing in for systemd's NOTIFY_SOCKET), read on the
/// shared loop; ``next(within:)`` awaits the next datagram.
public final class DatagramListener: Sendable {
    private struct State {
        var datagrams: [String] = []
        var waiters: [(id: UInt64, continuation: CheckedContinuation<String?, Never>, timer: EventLoop.Timer?)] = []
        var nextWaiter: UInt64 = 0
    }

    /// The address as NOTIFY_SOCKET names it ("@name").
    public let address: String
    private let fd: FileDescriptor
    private let registration: Mutex<EventLoop.Registration?>
    private let state = Mutex(State())

    /// Binds a fresh abstract address.
    public init() throws(SystemError) {
        address = "@bleagent-test-notify-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        fd = try UnixSocket.make(type: Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue))
        registration = Mutex(nil)
        do {
            try UnixSocket.bind(fd, to: address)
            let fd = self.fd
            let watched = try EventLoop.shared.register(fd, interest: .readable) { [weak self] _ in
                var buffer = [UInt8](repeating: 0, count: 4096)
                while true {
                    let count = buffer.withUnsafeMutableBytes { recv(fd.rawValue, $0.baseAddress, $0.count, 0) }
                    guard count >= 0 else { return }
                    self?.deliver(String(decoding: buffer[..<count], as: UTF8.self))
                }
            }
            registration.withLock { $0 = watched }
        } catch {
            fd.close()
            throw error
        }
    }

    deinit {
        if let watched = registration.withLock({ $0 }) { EventLoop.shared.deregister(watched) }
        fd.close()
    }

    private func deliver(_ text: String) {
        let waiter = state.withLock { state -> (CheckedContinuation<String?, Never>, EventLoop.Timer?)? in
            guard !state.waiters.isEmpty else {
                state.datagrams.append(text)
                return nil
            }
            let first = state.waiters.removeFirst()
            return (first.continuation, first.timer)
        }
        guard let (continuation, timer) = waiter else { return }
        if let timer { EventLoop.shared.cancel(timer) }
        continuation.resume(returning: text)
    }

    /// The next datagram's text; `nil` (with an issue) past the deadline.
    public func next(within deadline: Duration = testDeadline) async -> String? {
        let text = await withCheckedContinuation { (continuation: CheckedContinuation<String?, Never>) in
            let id = state.withLock { state -> UInt64? in
                if !state.datagrams.isEmpty {
                    continuation.resume(returning: state.datagrams.removeFirst())
                    return nil
                }
                state.nextWaiter += 1
                state.waiters.append((state.nextWaiter, continuation, nil))
                return state.nextWaiter
            }
            guard let id else { return }
            let timer = EventLoop.shared.schedule(after: deadline) { [weak self] in
                let expired = self?.state.withLock { state -> CheckedContinuation<String?, Never>? in
                    guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                    return state.waiters.remove(at: index).continuation
                }
                expired?.resume(returning: nil)
            }
            state.withLock { state in
                if let index = state.waiters.firstIndex(where: { $0.id == id }) { state.waiters[index].timer = timer }
            }
        }
        if text == nil { Issue.record("no datagram on \(address) within \(deadline)") }
        return text
    }
}
