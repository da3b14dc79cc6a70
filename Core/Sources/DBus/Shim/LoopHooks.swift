internal import CDBus

/// Installs the owner thread's hooks on a libdbus connection: watch and timeout functions feeding a ``WatchTable``,
/// a dispatch-status function asking the ``ConnectionDriver`` for a dispatch turn, and the one filter through which
/// every incoming message reaches the driver.
///
/// The hooks receive unretained pointers: the driver keeps the table and itself alive until after the connection is
/// closed and released.
enum LoopHooks {
    static func install(on connection: OpaquePointer, table: WatchTable, driver: ConnectionDriver) -> Bool {
        let registryPointer = Unmanaged.passUnretained(table).toOpaque()
        let loopPointer = Unmanaged.passUnretained(driver).toOpaque()
        let watches = dbus_connection_set_watch_functions(
            connection,
            { watch, data in
                guard let watch, let data else { return 0 }
                LoopHooks.registry(data).setWatch(LoopHooks.handle(watch), LoopHooks.describe(watch))
                return 1
            },
            { watch, data in
                guard let watch, let data else { return }
                LoopHooks.registry(data).removeWatch(LoopHooks.handle(watch))
            },
            { watch, data in
                guard let watch, let data else { return }
                LoopHooks.registry(data).setWatch(LoopHooks.handle(watch), LoopHooks.describe(watch))
            },
            registryPointer, nil)
        let timeouts = dbus_connection_set_timeout_functions(
            connection,
            { timeout, data in
                guard let timeout, let data else { return 0 }
                LoopHooks.registry(data).setTimeout(
                    LoopHooks.handle(timeout), intervalMilliseconds: dbus_timeout_get_interval(timeout),
                    enabled: dbus_timeout_get_enabled(timeout) != 0)
                return 1
            },
            { timeout, data in
                guard let timeout, let data else { return }
                LoopHooks.registry(data).removeTimeout(LoopHooks.handle(timeout))
            },
            { timeout, data in
                guard let timeout, let data else { return }
                LoopHooks.registry(data).setTimeout(
                    LoopHooks.handle(timeout), intervalMilliseconds: dbus_timeout_get_interval(timeout),
                    enabled: dbus_timeout_get_enabled(timeout) != 0)
            },
            registryPointer, nil)
        dbus_connection_set_dispatch_status_function(
            connection,
            { _, status, data in
                guard let data, status == DBUS_DISPATCH_DATA_REMAINS else { return }
                Unmanaged<ConnectionDriver>.fromOpaque(data).takeUnretainedValue().scheduleDispatch()
            },
            loopPointer, nil)
        let filter = dbus_connection_add_filter(
            connection,
            { _, message, data in
                guard let message, let data else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
                let loop = Unmanaged<ConnectionDriver>.fromOpaque(data).takeUnretainedValue()
                return loop.receive(message) ? DBUS_HANDLER_RESULT_HANDLED : DBUS_HANDLER_RESULT_NOT_YET_HANDLED
            },
            loopPointer, nil)
        return watches != 0 && timeouts != 0 && filter != 0
    }

    fileprivate static func registry(_ data: UnsafeMutableRawPointer) -> WatchTable {
        Unmanaged<WatchTable>.fromOpaque(data).takeUnretainedValue()
    }

    fileprivate static func handle(_ pointer: OpaquePointer) -> UInt { UInt(bitPattern: Int(bitPattern: pointer)) }

    fileprivate static func describe(_ watch: OpaquePointer) -> WatchTable.Watch {
        WatchTable.Watch(
            fd: dbus_watch_get_unix_fd(watch), flags: dbus_watch_get_flags(watch),
            enabled: dbus_watch_get_enabled(watch) != 0)
    }

    /// Turns a registry handle back into the libdbus pointer (owner thread only).
    static func pointer(_ handle: UInt) -> OpaquePointer? { OpaquePointer(bitPattern: handle) }
}
