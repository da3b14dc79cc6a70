import IO
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Waits on the shared loop until `fd` is readable (or hung up): `true`, or `false` when `deadline` passes first.
/// The descriptor is watched through a duplicate, so it may be registered elsewhere too.
public func waitUntilReadable(_ fd: Int32, within deadline: Duration = testDeadline) async -> Bool {
    await waitUntil(.readable, fd, within: deadline)
}

/// Waits on the shared loop until `fd` has room to write: `true`, or `false` when it hung up, failed, or
/// `deadline` passed first.
public func waitUntilWritable(_ fd: Int32, within deadline: Duration = testDeadline) async -> Bool {
    await waitUntil(.writable, fd, within: deadline)
}

private func waitUntil(_ interest: EventLoop.Interest, _ fd: Int32, within deadline: Duration) async -> Bool {
    let loop = EventLoop.shared
    guard let watched = try? FileDescriptor(rawValue: fd).duplicate() else { return false }
    defer { watched.close() }
    return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
        let state = Mutex<(done: Bool, registration: EventLoop.Registration?, timer: EventLoop.Timer?)>(
            (false, nil, nil))
        let finish: @Sendable (Bool) -> Void = { ready in
            let taken = state.withLock { state -> (EventLoop.Registration?, EventLoop.Timer?)? in
                guard !state.done else { return nil }
                state.done = true
                return (state.registration, state.timer)
            }
            guard let (registration, timer) = taken else { return }
            if let registration { loop.deregister(registration) }
            if let timer { loop.cancel(timer) }
            continuation.resume(returning: ready)
        }
        do {
            let registration = try loop.register(watched, interest: interest) { readiness in
                finish(interest == .readable || readiness.isDisjoint(with: [.hangUp, .error]))
            }
            let timer = loop.schedule(after: deadline) { finish(false) }
            let done = state.withLock { state -> Bool in
                state.registration = registration
                state.timer = timer
                return state.done
            }
            if done {
                loop.deregister(registration)
                loop.cancel(timer)
            }
        } catch {
            finish(false)
        }
    }
}

/// The next packet (or datagram, or chunk) readable on `fd`, read without blocking once the loop says it is
/// there: its bytes, `[]` at the end of the stream, `nil` when `deadline` passes first.
public func readWhenReady(
    _ fd: Int32, capacity: Int = 65536, within deadline: Duration = testDeadline
) async
    -> [UInt8]?
{
    guard await waitUntilReadable(fd, within: deadline) else { return nil }
    var buffer = [UInt8](repeating: 0, count: capacity)
    let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
    if count < 0 && errno == ENOTSOCK {
        let read = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        return read > 0 ? Array(buffer[0..<read]) : []
    }
    return count > 0 ? Array(buffer[0..<count]) : []
}
