import IO

/// What the owner thread learned while opening the connection.
struct ConnectionInfo: Sendable {
    let uniqueName: String?
    let canPassUnixFDs: Bool
}

/// Starts the dedicated thread that opens, owns and finally closes one libdbus connection, running the connection's
/// ``EventLoop``.
///
/// Opening (connect, authenticate, `Hello`) uses libdbus's blocking helpers, but on this thread, before its loop
/// starts, so no Swift concurrency thread ever waits on D-Bus; the awaiting `connect` resumes when it is done.
enum OwnerThread {
    static func spawn(
        core: ConnectionCore, target: LibDBus.Target, ready: CheckedContinuation<ConnectionInfo, any Error>
    ) {
        do {
            try IOThread.spawn(name: "dbus-owner") { run(core: core, target: target, ready: ready) }
        } catch {
            core.markClosed()
            ready.resume(throwing: DBusError(.limitsExceeded, "\(error)"))
        }
    }

    private static func run(
        core: ConnectionCore, target: LibDBus.Target, ready: CheckedContinuation<ConnectionInfo, any Error>
    ) {
        let connection: OpaquePointer
        do {
            connection = try LibDBus.open(target)
        } catch {
            core.markClosed()
            ready.resume(throwing: error)
            return
        }
        let driver = ConnectionDriver(core: core, connection: connection)
        guard driver.start() else {
            LibDBus.closeAndUnref(connection)
            core.markClosed()
            ready.resume(throwing: DBusError(.noMemory, "could not install the connection's hooks"))
            return
        }
        ready.resume(
            returning: ConnectionInfo(
                uniqueName: LibDBus.uniqueName(connection), canPassUnixFDs: LibDBus.canPassUnixFDs(connection)))
        core.loop.run()
        withExtendedLifetime(driver) {}
    }
}
