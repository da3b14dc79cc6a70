import Glibc

/// What the owner thread learned while opening the connection.
struct ConnectionInfo: Sendable {
    let uniqueName: String?
    let canPassUnixFDs: Bool
}

/// Starts the dedicated thread that opens, owns and finally closes one libdbus connection.
///
/// Opening (connect, authenticate, `Hello`) uses libdbus's blocking helpers, but on this thread, before its loop
/// starts, so no Swift concurrency thread ever waits on D-Bus; the awaiting `connect` resumes when it is done.
enum OwnerThread {
    static func spawn(
        core: ConnectionCore, target: LibDBus.Target, ready: CheckedContinuation<ConnectionInfo, any Error>
    ) {
        let start = Start(core: core, target: target, ready: ready)
        let box = Unmanaged.passRetained(start).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(
            &thread, nil,
            { argument in
                guard let argument else { return nil }
                Unmanaged<Start>.fromOpaque(argument).takeRetainedValue().run()
                return nil
            }, box)
        if status != 0 {
            Unmanaged<Start>.fromOpaque(box).release()
            ready.resume(throwing: DBusError(.limitsExceeded, "pthread_create failed: \(status)"))
        } else {
            pthread_detach(thread)
        }
    }

    private final class Start: Sendable {
        let core: ConnectionCore
        let target: LibDBus.Target
        let ready: CheckedContinuation<ConnectionInfo, any Error>

        init(core: ConnectionCore, target: LibDBus.Target, ready: CheckedContinuation<ConnectionInfo, any Error>) {
            self.core = core
            self.target = target
            self.ready = ready
        }

        func run() {
            let connection: OpaquePointer
            do {
                connection = try LibDBus.open(target)
            } catch {
                core.markClosed()
                ready.resume(throwing: error)
                return
            }
            let loop = EventLoop(core: core, connection: connection)
            guard loop.installHooks() else {
                LibDBus.closeAndUnref(connection)
                core.markClosed()
                ready.resume(throwing: DBusError(.noMemory, "could not install the connection's hooks"))
                return
            }
            ready.resume(
                returning: ConnectionInfo(
                    uniqueName: LibDBus.uniqueName(connection), canPassUnixFDs: LibDBus.canPassUnixFDs(connection)))
            loop.run()
        }
    }
}
