import DBus
import GATT
import SimCore

/// GattService1, GattCharacteristic1 and GattDescriptor1 of connected devices, as bluetoothd's
/// gatt-client.c declares them; handlers forward to the world and wait the simulated latency.
struct GattInterfaces: Sendable {
    let host: SimHost
    let sockets: AcquiredSockets
    /// Where operations on an adapter's own peripheral go (its applications).
    let local: LocalInterfaces

    static let serviceTypes: [(String, String)] = [
        ("UUID", "s"), ("Device", "o"), ("Primary", "b"), ("Includes", "ao"),
    ]
    static let characteristicTypes: [(String, String)] = [
        ("UUID", "s"), ("Service", "o"), ("Value", "ay"), ("Notifying", "b"), ("Flags", "as"),
        ("WriteAcquired", "b"), ("NotifyAcquired", "b"), ("MTU", "q"),
    ]
    static let descriptorTypes: [(String, String)] = [("UUID", "s"), ("Characteristic", "o"), ("Value", "ay")]

    /// The interface `name` at `path` with `properties`; nil for an interface blesim does not build here.
    func interface(_ name: String, path: String, properties: [Property]) throws -> ExportedInterface? {
        let values = Dictionary(properties.map { ($0.name, DBusMapping.value($0.value)) }, uniquingKeysWith: { $1 })
        func declared(_ types: [(String, String)]) throws -> [ExportedProperty] {
            try types.map { try ExportedProperty($0.0, type: DBusType($0.1), access: .read, value: values[$0.0]) }
        }
        switch name {
        case BlueZInterface.gattService:
            return try ExportedInterface(name, methods: [], properties: declared(Self.serviceTypes))
        case BlueZInterface.gattCharacteristic:
            return try ExportedInterface(
                name, methods: characteristicMethods(path), properties: declared(Self.characteristicTypes))
        case BlueZInterface.gattDescriptor:
            return try ExportedInterface(name, methods: valueMethods(path), properties: declared(Self.descriptorTypes))
        default: return nil
        }
    }

    private func valueMethods(_ path: String) throws -> [ExportedMethod] {
        [
            try ExportedMethod(
                "ReadValue", inputs: [DBusArgument("options", try DBusType("a{sv}"))],
                outputs: [DBusArgument("value", try DBusType("ay"))]
            ) { call in
                let options = try Self.options(call.arguments().first)
                let operation = try run { () throws(BlueZError) in
                    try host.world { world, _ throws(BlueZError) in
                        (try world.beginRead(path: path, offset: options.offset), [])
                    }
                }
                let value = try await complete(operation)
                // bluetoothd announces the cached Value before it replies to the read.
                call.flushSignals()
                return [.bytes(value)]
            },
            try ExportedMethod(
                "WriteValue",
                inputs: [DBusArgument("value", try DBusType("ay")), DBusArgument("options", try DBusType("a{sv}"))]
            ) { call in
                let arguments = try call.arguments()
                guard arguments.count == 2, case .bytes(let value) = arguments[0].unwrapped else {
                    throw DBusMapping.error(BluetoothdError.invalidArguments)
                }
                let options = try Self.options(arguments[1])
                let operation = try run { () throws(BlueZError) in
                    try host.world { world, _ throws(BlueZError) in
                        (try world.beginWrite(path: path, value: value, offset: options.offset, type: options.type), [])
                    }
                }
                _ = try await complete(operation)
                return []
            },
        ]
    }

    private func characteristicMethods(_ path: String) throws -> [ExportedMethod] {
        try valueMethods(path) + [
            ExportedMethod("StartNotify", in: "", out: "") { call in
                releaseClosedSocket(path)
                try run { () throws(BlueZError) in
                    try subscribing(path, start: true, after: call) { world throws(BlueZError) in
                        ((), try world.startNotify(path: path, owner: call.sender))
                    }
                }
                return []
            },
            ExportedMethod("StopNotify", in: "", out: "") { call in
                try run { () throws(BlueZError) in
                    try subscribing(path, start: false, after: call) { world throws(BlueZError) in
                        ((), try world.stopNotify(path: path, owner: call.sender))
                    }
                }
                return []
            },
            try ExportedMethod(
                "AcquireNotify", inputs: [DBusArgument("options", try DBusType("a{sv}"))],
                outputs: [DBusArgument("fd", .unixFD), DBusArgument("mtu", .uint16)]
            ) { call in
                releaseClosedSocket(path)
                return try acquire(.notify, path: path, owner: call.sender, call: call)
            },
            try ExportedMethod(
                "AcquireWrite", inputs: [DBusArgument("options", try DBusType("a{sv}"))],
                outputs: [DBusArgument("fd", .unixFD), DBusArgument("mtu", .uint16)]
            ) { call in
                try acquire(.write, path: path, owner: call.sender, call: call)
            },
        ]
    }

    /// A client that closed its AcquireNotify socket and then subscribes again must find the
    /// socket released: the close comes first for it, even when the socket's reader has not
    /// seen the end of file yet (the reader's own release then finds nothing to do).
    private func releaseClosedSocket(_ path: String) {
        guard sockets.peerClosed(.notify, path: path) else { return }
        try? subscribing(path, start: false) { world throws(BlueZError) in ((), world.releaseNotify(path: path)) }
    }

    private func acquire(
        _ kind: AcquiredSockets.Kind, path: String, owner: String, call: DBusMethodCall
    ) throws -> [DBusValue] {
        let release: @Sendable () -> Void = { [self] in
            try? subscribing(path, start: false) { world throws(BlueZError) in
                ((), kind == .notify ? world.releaseNotify(path: path) : world.releaseWrite(path: path))
            }
        }
        // An AcquireNotify writes the peer's CCC like StartNotify: a local application is told.
        let mtu = try run { () throws(BlueZError) in
            try subscribing(path, start: true, after: call) { world throws(BlueZError) in
                kind == .notify ? try world.acquireNotify(path: path, owner: owner) : try world.acquireWrite(path: path)
            }
        }
        // Packets on an AcquireWrite socket are write commands; to a local application they are
        // its WriteValue (or its own AcquireWrite socket), in order.
        let target = kind == .write ? host.read({ $0.localTarget(remotePath: path) }) : nil
        let local = self.local
        let writes = target.map { (attribute, central, mtu) -> WriteCommandQueue in
            let queue = WriteCommandQueue()
            Task {
                for await bytes in queue.commands {
                    _ = await local.call(attribute, write: bytes, offset: 0, mtu: mtu, central: central)
                    queue.delivered()
                }
            }
            return queue
        }
        // Under the link model the socket is read at the link's pace (bluetoothd forwards write
        // commands as the channel's credits allow), so a faster writer fills it.
        let paced = kind == .write && target == nil && host.read { $0.linkModel != nil }
        let theirs = sockets.open(
            kind, path: path, smallBuffer: paced,
            onPacket: { bytes in
                if let writes { return writes.accept(bytes) }
                var wait = 0.0
                host.update { world, _ in
                    wait = world.socketWrite(path: path, bytes); return []
                }
                return wait > 0 ? .pause(seconds: wait) : .readOn
            },
            onClose: {
                writes?.finish()
                release()
            })
        guard let theirs else {
            writes?.finish()
            release()
            throw DBusMapping.error(BluetoothdError.failed("Failed to create socket"))
        }
        writes?.setResume(theirs.resume)
        return [.unixFD(UnixFD(owning: theirs.fd)), .uint16(mtu)]
    }

    /// Waits the operation's delay, then lets the peer answer. An injected timeout waits the
    /// ATT timeout, fails the request and drops the link, as bluetoothd (the reply first).
    private func complete(_ operation: GATTOperation) async throws -> [UInt8] {
        if operation.timesOut {
            let seconds = host.read { $0.attTimeout }
            try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
            var error = SimWorld.attTimeoutError
            host.update { world, _ in
                let (timedOut, batches) = world.attTimedOut(operation)
                error = timedOut
                return batches
            }
            throw DBusMapping.error(error)
        }
        if operation.delay > 0 { try await Task.sleep(for: .milliseconds(Int(operation.delay * 1000))) }
        var relayed: Result<[UInt8], ATTError>? = nil
        if operation.injectedError == nil,
            let (attribute, central) = host.read({ world in
                world.localAttribute(of: operation).map { ($0, Self.centralPath(world, operation)) }
            })
        {
            relayed = await local.relay(operation, to: attribute, central: central)
        }
        var outcome: Result<[UInt8], BlueZError> = .failure(BluetoothdError.failed("Not connected"))
        host.update { world, now in
            let (result, batches) = world.finish(operation, at: now, relayed: relayed)
            outcome = result
            return batches
        }
        switch outcome {
        case .success(let value): return value
        case .failure(let error): throw DBusMapping.error(error)
        }
    }

    /// The Device1 path the peripheral's bluetoothd would give the central of `operation`.
    private static func centralPath(_ world: SimWorld, _ operation: GATTOperation) -> String {
        world.centralView(adapter: operation.adapter, address: operation.address)?.central ?? "/"
    }

    /// Runs a StartNotify/StopNotify/AcquireNotify (or its release) on the world and, under the
    /// same lock (so concurrent subscriptions are seen in order), tells a local application when
    /// the link's subscription turns on (on each enabling) or the last one turns off.
    private func subscribing<R: Sendable>(
        _ path: String, start: Bool, after call: DBusMethodCall? = nil,
        _ operation: (inout SimWorld) throws(BlueZError) -> (R, [SimWorld.Batch])
    ) throws(BlueZError) -> R {
        let local = self.local
        return try host.world { world, _ throws(BlueZError) in
            let before = world.localCharacteristic(remotePath: path)
            let target = world.localTarget(remotePath: path)
            let (result, batches) = try operation(&world)
            if let (attribute, was) = before {
                let now = world.localCharacteristic(remotePath: path)?.subscribers ?? 0
                if (start && now > was) || (!start && now == 0 && was > 0) {
                    local.subscriptionChanged(
                        attribute, start: start, central: target?.central ?? "/", mtu: target?.mtu ?? 23, after: call)
                }
            }
            return (result, batches)
        }
    }

    /// The options of ReadValue/WriteValue as gatt-client.c's `parse_options` reads them:
    /// `offset` must be a uint16 and `type` a string, else InvalidArguments.
    static func options(_ argument: DBusValue?) throws -> (offset: Int, type: String?) {
        guard case .dictionary(_, _, let entries)? = argument?.unwrapped else {
            throw DBusMapping.error(BluetoothdError.invalidArguments)
        }
        var offset = 0
        var type: String?
        for entry in entries {
            guard let key = entry.key.stringValue?.lowercased() else { continue }
            switch (key, entry.value.unwrapped) {
            case ("offset", .uint16(let number)): offset = Int(number)
            case ("offset", _): throw DBusMapping.error(BluetoothdError.invalidArguments)
            case ("type", .string(let text)): type = text
            case ("type", _): throw DBusMapping.error(BluetoothdError.invalidArguments)
            default: continue
            }
        }
        return (offset, type)
    }

    private func run<R>(_ body: () throws(BlueZError) -> R) throws -> R {
        do {
            return try body()
        } catch {
            throw DBusMapping.error(error)
        }
    }
}
