import Synchronization

/// Reads a pipe (a child's standard output or error) on an ``EventLoop`` as data arrives, so the writer never
/// blocks on a full pipe, and keeps what it read for callers that await a condition on it.
///
/// At most `limit` bytes are kept: past it the oldest are dropped and counted (``droppedBytes``). The pipe is
/// closed at its end of file or by ``close()``.
public final class OutputCollector: Sendable {
    private struct Waiter {
        let id: UInt64
        let condition: @Sendable ([UInt8]) -> Bool
        let continuation: CheckedContinuation<Bool, Never>
        var timer: EventLoop.Timer?
    }

    private struct State {
        var bytes: [UInt8] = []
        var dropped = 0
        var ended = false
        var registration: EventLoop.Registration?
        var waiters: [Waiter] = []
        var nextWaiter: UInt64 = 0
    }

    private let fd: FileDescriptor
    private let loop: EventLoop
    private let limit: Int
    private let state = Mutex(State())

    /// Starts reading `fd` (which the collector now owns) on `loop`, keeping at most `limit` bytes.
    public init(_ fd: FileDescriptor, loop: EventLoop = .shared, limit: Int = 1 << 20) throws(SystemError) {
        self.fd = fd
        self.loop = loop
        self.limit = max(1, limit)
        try fd.setNonBlocking()
        let registration = try loop.register(fd, interest: .readable) { [weak self] _ in self?.readAvailable() }
        let alreadyClosed = state.withLock { state -> Bool in
            if state.ended { return true }
            state.registration = registration
            return false
        }
        if alreadyClosed {
            loop.deregister(registration)
            fd.close()
        }
    }

    deinit { close() }

    /// Everything kept so far.
    public var bytes: [UInt8] { state.withLock { $0.bytes } }

    /// ``bytes`` as UTF-8 text.
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    /// Whether the writer closed its end (or ``close()`` was called).
    public var isFinished: Bool { state.withLock { $0.ended } }

    /// Bytes dropped because more than the limit arrived.
    public var droppedBytes: Int { state.withLock { $0.dropped } }

    /// Waits until `condition` holds for the bytes kept (checked now, then after each read): `true`; `false` when
    /// the pipe ends first or `timeout` passes.
    public func wait(timeout: Duration, until condition: @escaping @Sendable ([UInt8]) -> Bool) async -> Bool {
        await withCheckedContinuation { continuation in
            let (outcome, id) = state.withLock { state -> (Bool?, UInt64) in
                if condition(state.bytes) { return (true, 0) }
                if state.ended { return (false, 0) }
                state.nextWaiter += 1
                state.waiters.append(
                    Waiter(id: state.nextWaiter, condition: condition, continuation: continuation, timer: nil))
                return (nil, state.nextWaiter)
            }
            if let outcome {
                continuation.resume(returning: outcome)
                return
            }
            let timer = loop.schedule(after: timeout) { [weak self] in self?.expire(id) }
            let resumed = state.withLock { state -> Bool in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return true }
                state.waiters[index].timer = timer
                return false
            }
            if resumed { loop.cancel(timer) }
        }
    }

    /// Waits for the end of the pipe: `true`, or `false` when `timeout` passes first.
    public func waitForEnd(timeout: Duration) async -> Bool {
        let ended = await wait(timeout: timeout) { _ in false }
        return ended || isFinished
    }

    /// Stops reading and closes the pipe; waiters get `false`.
    public func close() {
        let (registration, waiters) = state.withLock { state -> (EventLoop.Registration?, [Waiter]) in
            guard !state.ended || state.registration != nil else { return (nil, []) }
            state.ended = true
            defer {
                state.registration = nil
                state.waiters = []
            }
            return (state.registration, state.waiters)
        }
        if let registration {
            loop.deregister(registration)
            fd.close()
        }
        finish(waiters, with: nil)
    }

    private func readAvailable() {
        var chunk = [UInt8](repeating: 0, count: 65536)
        var ended = false
        var arrived: [UInt8] = []
        while arrived.count < 1 << 20 {
            let transfer = chunk.withUnsafeMutableBytes { raw in
                Result { () throws(SystemError) in try fd.read(into: raw) }
            }
            guard case .success(let count) = transfer, count > 0 else {
                if case .failure(let error) = transfer, error.errno == .wouldBlock { break }
                ended = true
                break
            }
            arrived += chunk[..<count]
        }
        let (satisfied, rest, registration) = state.withLock { state -> ([Waiter], [Waiter], EventLoop.Registration?) in
            state.bytes += arrived
            if state.bytes.count > limit {
                let excess = state.bytes.count - limit
                state.bytes.removeFirst(excess)
                state.dropped += excess
            }
            var satisfied: [Waiter] = []
            var waiting: [Waiter] = []
            for waiter in state.waiters {
                if waiter.condition(state.bytes) { satisfied.append(waiter) } else { waiting.append(waiter) }
            }
            if ended {
                state.ended = true
                state.waiters = []
                defer { state.registration = nil }
                return (satisfied, waiting, state.registration)
            }
            state.waiters = waiting
            return (satisfied, [], nil)
        }
        finish(satisfied, with: true)
        finish(rest, with: false)
        if let registration {
            loop.deregister(registration)
            fd.close()
        }
    }

    private func expire(_ id: UInt64) {
        let expired = state.withLock { state -> Waiter? in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return state.waiters.remove(at: index)
        }
        if let expired { expired.continuation.resume(returning: false) }
    }

    private func finish(_ waiters: [Waiter], with outcome: Bool?) {
        for waiter in waiters {
            if let timer = waiter.timer { loop.cancel(timer) }
            waiter.continuation.resume(returning: outcome ?? false)
        }
    }
}
