import Glibc
import Synchronization

/// Runs `body(0)` ... `body(count - 1)` each on a thread of its own (blocking I/O, off any pool) and returns
/// their results in order once all have finished.
func onThreads<T: Sendable>(_ count: Int, _ body: @escaping @Sendable (Int) -> T) -> [T] {
    let results = Mutex<[Int: T]>([:])
    var threads: [pthread_t] = []
    for index in 0..<count {
        let job: @Sendable () -> Void = {
            let result = body(index)
            results.withLock { $0[index] = result }
        }
        if let thread = startThread(job) { threads.append(thread) } else { job() }
    }
    for thread in threads { pthread_join(thread, nil) }
    return results.withLock { table in (0..<count).compactMap { table[$0] } }
}

/// Starts `body` on a detached thread of its own; false when no thread could be made.
func onBackgroundThread(_ body: @escaping @Sendable () -> Void) -> Bool {
    guard let thread = startThread(body) else { return false }
    pthread_detach(thread)
    return true
}

/// A joinable thread running `body`, nil when pthread_create failed.
private func startThread(_ body: @escaping @Sendable () -> Void) -> pthread_t? {
    let job = Unmanaged.passRetained(ThreadJob(body)).toOpaque()
    var thread = pthread_t()
    let status = pthread_create(
        &thread, nil,
        { argument in
            guard let argument else { return nil }
            Unmanaged<ThreadJob>.fromOpaque(argument).takeRetainedValue().run()
            return nil
        }, job)
    guard status == 0 else {
        Unmanaged<ThreadJob>.fromOpaque(job).release()
        return nil
    }
    return thread
}

private final class ThreadJob: Sendable {
    let run: @Sendable () -> Void
    init(_ run: @escaping @Sendable () -> Void) { self.run = run }
}
