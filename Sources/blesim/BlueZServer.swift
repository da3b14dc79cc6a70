import DBus
import IO
import SimCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Serves org.bluez for a scenario on a bus until SIGINT or SIGTERM.
enum BlueZServer {
    struct Unavailable: Error, CustomStringConvertible {
        let description: String
    }

    static func serve(
        scenario: Scenario, address: String?, experimental: Bool, extendedAdvertising: Bool = false
    ) async throws {
        // bluetoothd dispatches what it reads at once; so does the simulator (no paced reading), so that the time a
        // GATT server's notifications take through it is bluetoothd's, not the agent's read interval.
        let connection: DBusConnection
        let bus: String
        if let address {
            connection = try await DBusConnection.connect(address: address, readInterval: .zero)
            bus = address
        } else {
            connection = try await DBusConnection.system(readInterval: .zero)
            bus = "the system bus"
        }
        let objects = connection.objects
        objects.style = .bluez
        let host = SimHost(world: SimWorld(scenario: scenario, experimental: experimental))
        let local = LocalInterfaces(
            host: host, connection: connection,
            advertising: AdvertisingFeatures(extended: extendedAdvertising, experimental: experimental))
        let interfaces = BlueZInterfaces(host: host, objects: objects, experimental: experimental, local: local)
        let sockets = AcquiredSockets()
        let gatt = GattInterfaces(host: host, sockets: sockets, local: local)
        let monitors = MonitorInterfaces(host: host, connection: connection)
        host.setEmitter { signals in
            for signal in signals {
                if case .monitorDeviceFound(let owner, let monitor, let device) = signal {
                    monitors.call(owner: owner, monitor: monitor, "DeviceFound", device: device)
                    continue
                }
                if case .monitorDeviceLost(let owner, let monitor, let device) = signal {
                    monitors.call(owner: owner, monitor: monitor, "DeviceLost", device: device)
                    continue
                }
                if case .advertisementReleased(let owner, let path) = signal {
                    local.release(owner: owner, path: path)
                    continue
                }
                if case .applicationUnsubscribed(let owner, let path) = signal {
                    local.unsubscribed(owner: owner, path: path)
                    continue
                }
                DBusMapping.apply(signal, to: objects, sockets: sockets) { path, name, properties in
                    if name == BlueZInterface.battery {
                        try objects.addInterface(interfaces.battery(properties: properties), at: ObjectPath(path))
                    } else if let built = try gatt.interface(name, path: path, properties: properties) {
                        try objects.export(ObjectPath(path), interfaces: [built])
                    } else {
                        try objects.export(
                            ObjectPath(path), interfaces: [interfaces.device(path: path, properties: properties)])
                    }
                }
            }
        }

        let departures = try await connection.nameOwnerChanges()
        objects.addObjectManager(at: .root)
        try objects.export(ObjectPath("/org/bluez"), interfaces: [interfaces.agentManager()])
        let central = VirtualCentralMethods(host: host, local: local)
        try objects.export(
            ObjectPath(ControlInterface.path),
            interfaces: [ControlInterface(host: host, central: central).interface()])
        for adapter in host.read({ $0.adapters }) {
            try objects.export(
                ObjectPath(adapter.path),
                interfaces: [
                    interfaces.adapter(index: adapter.index, properties: adapter.properties),
                    local.gattManager(index: adapter.index), local.advertisingManager(index: adapter.index),
                ] + (experimental ? [monitors.manager(index: adapter.index)] : []))
        }
        let reply = try await connection.requestName("org.bluez")
        guard reply == .primaryOwner else {
            throw Unavailable(description: "org.bluez is already owned on \(bus) (is bluetoothd running?)")
        }
        installSignalHandlers()
        startCounters(host)
        let summary = host.read { "\($0.adapters.count) adapter(s), \($0.devices.count) virtual device(s)" }
        Log.ready("blesim: ready on \(bus) as \(connection.uniqueName ?? "?"), \(summary)")

        let air = Task { await host.run() }
        let centrals = ScenarioCentralRunner.start(scenario.centrals, central: central, host: host)
        for await change in departures where change.newOwner == nil && change.name.hasPrefix(":") {
            local.ownerLeft(change.name)
            monitors.ownerLeft(change.name)
            host.clientLeft(change.name)
        }
        air.cancel()
        for task in centrals { task.cancel() }
        throw Unavailable(description: "the bus connection closed")
    }

    /// Prints the advertisement report counters at each SIGUSR1, on the shared event loop's thread (not Swift's
    /// pool, which a saturated blesim keeps busy): the handler only writes a byte to a pipe the loop watches.
    private static func startCounters(_ host: SimHost) {
        do {
            let (wake, wakeWrite) = try FileDescriptor.pipe()
            try wake.setNonBlocking()
            try wakeWrite.setNonBlocking()
            try EventLoop.shared.register(wake, interest: .readable) { _ in
                var drained = [UInt8](repeating: 0, count: 64)
                while drained.withUnsafeMutableBytes({ Glibc.read(wake.rawValue, $0.baseAddress, $0.count) }) > 0 {}
                let counts = host.advertisementReports.enumerated().map { "hci\($0.offset)=\($0.element)" }
                Log.info("advertisement reports \(counts.joined(separator: " "))")
            }
            counterWake.store(wakeWrite.rawValue, ordering: .releasing)
        } catch {
            Log.error("no SIGUSR1 counters: \(error)")
            return
        }
        // SIGUSR1: the counters on standard error (a benchmark's "offered"; a D-Bus method's reply would
        // queue behind every signal blesim has not yet written when it is saturated).
        signal(SIGUSR1) { _ in
            var byte: UInt8 = 1
            _ = Glibc.write(counterWake.load(ordering: .acquiring), &byte, 1)
        }
    }

    private static func installSignalHandlers() {
        // A client's closed socket or a closed standard error fails the write (EPIPE); it must
        // not kill the simulator the way it would kill no bluetoothd.
        signal(SIGPIPE, SIG_IGN)
        signal(SIGINT) { _ in _exit(0) }
        signal(SIGTERM) { _ in _exit(0) }
    }
}

/// The pipe SIGUSR1's handler writes to (set before the handler is installed).
private let counterWake = Atomic<Int32>(-1)
