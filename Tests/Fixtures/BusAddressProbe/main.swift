// Connects with DBusConnection.system() and .session(), prints each unique name and waits for the end of its
// standard input: DBusTests runs it with
// DBUS_SYSTEM_BUS_ADDRESS and DBUS_SESSION_BUS_ADDRESS set, so the test process never changes its own environment
// (setenv races every thread reading it while tests run in parallel).
import DBus

#if canImport(Glibc)
    import Glibc
#endif

do {
    let system = try await DBusConnection.system()
    let session = try await DBusConnection.session()
    print("system \(system.uniqueName ?? "-")")
    print("session \(session.uniqueName ?? "-")")
    fflush(nil)
    _ = readLine()  // the test looks the names up on its bus, then closes standard input
    await system.close()
    await session.close()
} catch {
    print("error \(error)")
    exit(1)
}
