import DBus
import GATT
import SimCore
import Synchronization

/// `org.bluez.AdvertisementMonitorManager1` on each adapter (served with `--experimental`, as
/// bluetoothd 5.66 serves it only with `-E`), and the calls blesim makes to the monitor
/// applications registered with it, as bluetoothd's src/adv_monitor.c does without controller
/// offload: it reads the application's objects (GetManagedObjects, then InterfacesAdded /
/// InterfacesRemoved below its root), puts each valid `or_patterns` monitor in effect and calls
/// its Activate, calls Release on an invalid one and on each monitor when the application
/// unregisters, and calls DeviceFound for each matching advertisement (see `SimAdapter.receive`).
final class MonitorInterfaces: Sendable {
    struct Application: Sendable {
        let adapter: Int
        var watch: Task<Void, Never>?
    }

    let host: SimHost
    let connection: DBusConnection
    /// Registered applications by "owner root".
    private let applications = Mutex<[String: Application]>([:])

    init(host: SimHost, connection: DBusConnection) {
        self.host = host
        self.connection = connection
    }

    /// The manager of adapter `index`.
    func manager(index: Int) throws -> ExportedInterface {
        try ExportedInterface(
            BlueZInterface.advertisementMonitorManager,
            methods: [
                ExportedMethod("RegisterMonitor", in: "o", out: "") { call in
                    let root = try Self.root(of: call)
                    try await self.register(adapter: index, owner: call.sender, root: root, call: call)
                    return []
                },
                ExportedMethod("UnregisterMonitor", in: "o", out: "") { call in
                    let root = try Self.root(of: call)
                    try self.unregister(adapter: index, owner: call.sender, root: root)
                    return []
                },
            ],
            properties: [
                ExportedProperty(
                    "SupportedMonitorTypes", type: .array(.string), access: .read,
                    value: .array(.string, [.string("or_patterns")])),
                // No controller offload (no MSFT extension): bluetoothd 5.66 reports none.
                ExportedProperty(
                    "SupportedFeatures", type: .array(.string), access: .read, value: .array(.string, [])),
            ])
    }

    /// A bus name left: its applications go (bluetoothd's `app_disconnect_cb`; the world drops its
    /// monitors in `clientLeft`).
    func ownerLeft(_ owner: String) {
        let tasks = applications.withLock { applications in
            let keys = applications.keys.filter { $0.hasPrefix(owner + " ") }
            return keys.compactMap { applications.removeValue(forKey: $0)?.watch }
        }
        for task in tasks { task.cancel() }
    }

    private static func root(of call: DBusMethodCall) throws -> String {
        guard case .objectPath(let path)? = try call.arguments().first?.unwrapped else {
            throw DBusMapping.error(BluetoothdError.invalidArguments)
        }
        return path.description
    }

    /// Registers `owner`'s application at `root`: the monitors found now get their Activate or Release
    /// after the reply (bluetoothd replies once the application is read, and activates a monitor once the
    /// kernel took its patterns).
    private func register(adapter: Int, owner: String, root: String, call: DBusMethodCall) async throws {
        let key = owner + " " + root
        let taken = applications.withLock { applications in
            if applications[key] != nil { return true }
            applications[key] = Application(adapter: adapter)
            return false
        }
        if taken { throw DBusMapping.error(BluetoothdError.alreadyExists) }
        // Subscribed before the objects are read, so no monitor added meanwhile is missed.
        let added = try? await connection.signals(.objectManager(sender: owner, path: try ObjectPath(root)))
        let reply = try? await connection.call(
            destination: owner, path: ObjectPath(root), interface: "org.freedesktop.DBus.ObjectManager",
            member: "GetManagedObjects")
        let objects = LocalObjectsParser.objects(try? reply?.arguments().first)
        var answers: [(path: String, member: String)] = []
        for (path, interfaces) in objects.sorted(by: { $0.key < $1.key }) {
            guard let properties = interfaces[BlueZInterface.advertisementMonitor],
                let member = monitorAdded(
                    adapter: adapter, owner: owner, root: root, path: path, properties: properties)
            else { continue }
            answers.append((path, member))
        }
        let calls = answers
        call.afterReply { for answer in calls { self.call(owner: owner, path: answer.path, answer.member) } }
        guard let added else { return }
        let watch = Task { [weak self] in
            for await signal in added {
                guard let self, let arguments = try? signal.arguments(), arguments.count == 2,
                    case .objectPath(let path)? = arguments.first?.unwrapped
                else { continue }
                switch signal.member {
                case "InterfacesAdded":
                    guard
                        let entry = arguments[1].dictionaryEntries?.first(where: {
                            $0.key.stringValue == BlueZInterface.advertisementMonitor
                        })
                    else { continue }
                    let path = path.description
                    if let member = self.monitorAdded(
                        adapter: adapter, owner: owner, root: root, path: path,
                        properties: LocalObjectsParser.properties(entry.value))
                    {
                        self.call(owner: owner, path: path, member)
                    }
                case "InterfacesRemoved":
                    let names = arguments[1].arrayValue ?? []
                    guard names.contains(where: { $0.stringValue == BlueZInterface.advertisementMonitor }) else {
                        continue
                    }
                    // bluetoothd's monitor_proxy_removed_cb: the monitor goes, without Release.
                    let path = path.description
                    self.host.update { world, _ in
                        _ = world.removeMonitors(adapter: adapter, owner: owner, under: path)
                        return []
                    }
                default: continue
                }
            }
        }
        let kept = applications.withLock { applications in
            guard applications[key] != nil else { return false }
            applications[key]?.watch = watch
            return true
        }
        if !kept { watch.cancel() }
    }

    /// A monitor object of the application: in effect when its Type is `or_patterns` with valid
    /// Patterns (bluetoothd's `monitor_process`). Returns the call it gets, `Activate` or `Release`
    /// (nil for an object outside the root).
    private func monitorAdded(
        adapter: Int, owner: String, root: String, path: String, properties: [String: DBusValue]
    ) -> String? {
        guard SimAdapter.isPath(path, under: root) else { return nil }
        let patterns = Self.patterns(properties)
        let rssi = Self.rssiFilter(properties)
        guard properties["Type"]?.stringValue == "or_patterns", let patterns, !patterns.isEmpty, rssi != .invalid
        else {
            return "Release"
        }
        host.update { world, _ in
            world.activateMonitor(
                adapter: adapter, SimMonitor(owner: owner, path: path, patterns: patterns, rssi: rssi.filter))
            return []
        }
        return "Activate"
    }

    /// The RSSI properties as bluetoothd 5.66's `parse_rssi_and_timeout` reads them (``SimMonitor/RSSIFilter/parsing(high:highTimeout:low:lowTimeout:samplingPeriod:)``);
    /// a property of another type than `n` (thresholds) or `q` (timeouts, sampling period) is invalid.
    static func rssiFilter(_ properties: [String: DBusValue]) -> SimMonitor.RSSIFilter.Parsed {
        var typed: [String: Int] = [:]
        for (name, signed) in [
            ("RSSIHighThreshold", true), ("RSSIHighTimeout", false), ("RSSILowThreshold", true),
            ("RSSILowTimeout", false), ("RSSISamplingPeriod", false),
        ] {
            guard let value = properties[name]?.unwrapped else { continue }
            switch (value, signed) {
            case (.int16(let number), true): typed[name] = Int(number)
            case (.uint16(let number), false): typed[name] = Int(number)
            default: return .invalid
            }
        }
        return SimMonitor.RSSIFilter.parsing(
            high: typed["RSSIHighThreshold"], highTimeout: typed["RSSIHighTimeout"], low: typed["RSSILowThreshold"],
            lowTimeout: typed["RSSILowTimeout"], samplingPeriod: typed["RSSISamplingPeriod"])
    }

    /// `Patterns` (`a(yyay)`) as bluetoothd's `parse_patterns` reads them; nil when one is invalid.
    static func patterns(_ properties: [String: DBusValue]) -> [AdvertisementPattern]? {
        guard let entries = properties["Patterns"]?.arrayValue else { return nil }
        var patterns: [AdvertisementPattern] = []
        for entry in entries {
            guard case .structure(let fields) = entry, fields.count == 3, case .byte(let start) = fields[0],
                case .byte(let type) = fields[1], let content = fields[2].bytesValue,
                let pattern = try? AdvertisementPattern(start: start, adType: type, content: content)
            else { return nil }
            patterns.append(pattern)
        }
        return patterns
    }

    private func unregister(adapter: Int, owner: String, root: String) throws {
        guard let application = applications.withLock({ $0.removeValue(forKey: owner + " " + root) }) else {
            throw DBusMapping.error(BluetoothdError.doesNotExist)
        }
        application.watch?.cancel()
        var removed: [SimMonitor] = []
        host.update { world, _ in
            removed = world.removeMonitors(adapter: application.adapter, owner: owner, under: root)
            return []
        }
        for monitor in removed { call(owner: owner, path: monitor.path, "Release") }
    }

    private func call(owner: String, path: String, _ member: String) {
        try? connection.callNoReply(
            destination: owner, path: ObjectPath(path), interface: BlueZInterface.advertisementMonitor, member: member)
    }

    /// DeviceFound or DeviceLost (`member`) with `device` on `owner`'s monitor at `monitor`.
    func call(owner: String, monitor: String, _ member: String, device: String) {
        guard let devicePath = try? ObjectPath(device) else { return }
        try? connection.callNoReply(
            destination: owner, path: ObjectPath(monitor), interface: BlueZInterface.advertisementMonitor,
            member: member, arguments: [.objectPath(devicePath)])
    }
}
