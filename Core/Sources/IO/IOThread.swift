internal import CLinux

#if canImport(Glibc)
    import Glibc
#endif

/// The one way the project starts a thread of its own: a detached pthread running a closure.
///
/// Threads exist for what must not run on Swift's cooperative pool: an ``EventLoop`` (each D-Bus connection's
/// owner, the process's shared loop) and the workers of a ``BlockingPool``. Everything else is a task.
public enum IOThread {
    /// Starts a detached thread named `name` (at most 15 bytes are kept: Linux's limit) running `body`.
    /// - Throws: ``SystemError`` when the thread cannot be created (`EAGAIN`: the process's thread limit).
    public static func spawn(name: String, _ body: @escaping @Sendable () -> Void) throws(SystemError) {
        let box = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(
            &thread, nil,
            { argument in
                guard let argument else { return nil }
                let start = Unmanaged<Start>.fromOpaque(argument).takeRetainedValue()
                clinux_name_thread(start.name)
                start.body()
                return nil
            }, box)
        guard status == 0 else {
            Unmanaged<Start>.fromOpaque(box).release()
            throw SystemError("pthread_create \(name)", errno: Errno(rawValue: status))
        }
        pthread_detach(thread)
    }

    private final class Start: Sendable {
        let name: String
        let body: @Sendable () -> Void

        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }
}
