import GATT

/// GattCharacteristic1 and GattDescriptor1 methods with gatt-client.c's checks, in two steps:
/// `begin...` admits the operation (or throws bluetoothd's error at once) and marks it in
/// flight; the shell waits the operation's delay and calls `finish`.
extension SimWorld {
    /// An attribute object located: its link, server and what it is.
    struct Located {
        var key: LinkKey
        var link: GATTLink
        var server: GATTServer
        var target: GATTObjects.Target
        var path: String

        var valueHandle: UInt16 {
            switch target {
            case .characteristic(let handle): handle
            case .descriptor(_, let chrc): chrc
            }
        }
    }

    func locate(attribute path: String) throws(BlueZError) -> Located {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count > 5, let (adapter, address) = Self.parse(devicePath: parts[0..<5].joined(separator: "/")),
            let link = links[LinkKey(adapter: adapter, address: address)], let server = servers[link.device],
            let target = GATTObjects.target(
                path: path, devicePath: adapters[adapter].devicePath(address), in: server)
        else { throw BluetoothdError.doesNotExist }
        return Located(
            key: LinkKey(adapter: adapter, address: address), link: link, server: server, target: target, path: path)
    }

    private func uuid(of located: Located) -> BluetoothUUID? {
        switch located.target {
        case .characteristic(let handle): return located.server.characteristic(valueHandle: handle)?.uuid
        case .descriptor(let handle, let chrc):
            return located.server.characteristic(valueHandle: chrc)?.descriptors.first { $0.handle == handle }?.uuid
        }
    }

    private mutating func operation(_ located: Located, _ request: GATTRequest) -> GATTOperation {
        // A write command has no answer to withhold or fail: bluetoothd replies to it at once.
        var fault: FaultPlan.Action? = nil
        if case .write(_, _, .command) = request {
        } else {
            fault = faults.take(address: located.key.address, uuid: uuid(of: located))
        }
        let handle: UInt16
        let isCharacteristic: Bool
        switch located.target {
        case .characteristic(let value):
            handle = value
            isCharacteristic = true
        case .descriptor(let descriptor, _):
            handle = descriptor
            isCharacteristic = false
        }
        var injected: BlueZError? = nil
        if case .error(let error)? = fault { injected = error }
        var operation = GATTOperation(
            adapter: located.key.adapter, address: located.key.address, handle: handle,
            isCharacteristic: isCharacteristic, request: request, delay: faults.delay(for: located.key.address),
            timesOut: fault == .timeout, injectedError: injected)
        operation.generation = located.link.generation
        return operation
    }

    /// ReadValue: `Failed "Not connected"` without a link; `InProgress` when a read of another
    /// offset is in flight (a read of the same offset joins it).
    public mutating func beginRead(path: String, offset: Int) throws(BlueZError) -> GATTOperation {
        var located = try locate(attribute: path)
        guard located.link.connected else { throw BluetoothdError.failed("Not connected") }
        let handle = Self.handle(located.target)
        if let inFlight = located.link.reads[handle], inFlight != offset { throw BluetoothdError.inProgress }
        located.link.reads[handle] = offset
        links[located.key] = located.link
        return operation(located, .read(offset: offset))
    }

    /// WriteValue: `Failed "Not connected"`, `NotPermitted "Write acquired"`, `InProgress` for a
    /// second write, the procedure chosen as gatt-client.c does (type, else reliable-write,
    /// write, write-without-response), `NotSupported` when none applies; a CCCD write is
    /// `NotPermitted "Write not permitted"` (StartNotify is the way).
    public mutating func beginWrite(
        path: String, value: [UInt8], offset: Int, type: String?
    ) throws(BlueZError)
        -> GATTOperation
    {
        var located = try locate(attribute: path)
        guard located.link.connected else { throw BluetoothdError.failed("Not connected") }
        let handle = Self.handle(located.target)
        let procedure: WriteProcedure
        switch located.target {
        case .descriptor(let descriptorHandle, let chrc):
            guard !located.link.writes.contains(handle) else { throw BluetoothdError.inProgress }
            let isCCCD =
                located.server.characteristic(valueHandle: chrc)?.descriptors.first { $0.handle == descriptorHandle }?
                .uuid == GATTServer.cccdUUID
            if isCCCD { throw BlueZError(.notPermitted, "Write not permitted") }
            procedure = .request
        case .characteristic(let valueHandle):
            guard !located.link.writeAcquired.contains(valueHandle) else {
                throw BlueZError(.notPermitted, "Write acquired")
            }
            guard !located.link.writes.contains(handle) else { throw BluetoothdError.inProgress }
            guard let flags = located.server.characteristic(valueHandle: valueHandle)?.flags else {
                throw BluetoothdError.doesNotExist
            }
            let kind = type?.lowercased()
            if (kind == nil && flags.extendedProperties.contains(.reliableWrite)) || kind == "reliable" {
                procedure = .reliable
            } else if (kind == nil && flags.properties.contains(.write)) || kind == "request" {
                procedure = .request
            } else if (kind != nil && kind != "command") || offset != 0
                || (kind == nil && !flags.properties.contains(.writeWithoutResponse))
            {
                throw BluetoothdError.notSupported
            } else {
                procedure = .command
            }
        }
        if procedure != .command {
            located.link.writes.insert(handle)
            links[located.key] = located.link
        }
        return operation(located, .write(value, offset: offset, procedure: procedure))
    }

    static func handle(_ target: GATTObjects.Target) -> UInt16 {
        switch target {
        case .characteristic(let handle): handle
        case .descriptor(let handle, _): handle
        }
    }

    /// The peer answers `operation`: the value read (or nothing for a write), or the error the
    /// client gets (ATT errors mapped as gatt-client.c maps them). A read updates the cached
    /// Value (PropertiesChanged); a write to a notifying characteristic does not notify.
    ///
    /// `relayed` is a local application's answer (the peer is an adapter's peripheral role):
    /// the value it returned, or the ATT error its D-Bus error maps to.
    public mutating func finish(
        _ operation: GATTOperation, at now: SimInstant = .zero, relayed: Result<[UInt8], ATTError>? = nil
    ) -> (
        Result<[UInt8], BlueZError>, [Batch]
    ) {
        let key = LinkKey(adapter: operation.adapter, address: operation.address)
        // Started on a connection that has since dropped: it ends there (the drop cleared the link's
        // operations in flight), never on the link that came up after.
        guard var link = links[key], link.generation == operation.generation else {
            return (.failure(BluetoothdError.failed("Not connected")), [])
        }
        switch operation.request {
        case .read: link.reads[operation.handle] = nil
        case .write: link.writes.remove(operation.handle)
        }
        links[key] = link
        if let error = operation.injectedError { return (.failure(error), []) }
        guard link.connected, var server = servers[link.device] else {
            return (.failure(BluetoothdError.failed("Not connected")), [])
        }
        do throws(ATTError) {
            switch operation.request {
            case .read(let offset):
                let value: [UInt8]
                if let relayed {
                    value = try relayed.get()
                } else {
                    value = try server.read(operation.handle, offset: offset)
                }
                let full = offset == 0 ? value : Array((link.cache[operation.handle] ?? []).prefix(offset)) + value
                link.cache[operation.handle] = full
                links[key] = link
                return (.success(value), valueChanged(key, server, operation, full))
            case .write(let bytes, let offset, let procedure):
                if relayed == nil, procedure == .command, pace(key, operation.handle, bytes) {
                    return (.success([]), [])  // on its way at the link's rate
                }
                do {
                    if let relayed {
                        _ = try relayed.get()
                    } else {
                        try server.write(operation.handle, bytes, offset: offset)
                    }
                } catch  where procedure == .command {
                    return (.success([]), [])  // no answer to a command
                }
                servers[link.device] = server
                if let uuid = server.characteristic(valueHandle: operation.handle)?.uuid, terminals[link.device] != nil
                {
                    // A command has no answer: a malformed one is dropped.
                    let batches =
                        procedure == .command
                        ? ((try? terminalWrite(device: link.device, characteristic: uuid, bytes, at: now)) ?? [])
                        : try terminalWrite(device: link.device, characteristic: uuid, bytes, at: now)
                    return (.success([]), batches)
                }
                return (.success([]), [])
            }
        } catch {
            return (.failure(BlueZATTErrorMapping.clientError(for: error)), [])
        }
    }

    private func valueChanged(
        _ key: LinkKey, _ server: GATTServer, _ operation: GATTOperation, _ value: [UInt8]
    )
        -> [Batch]
    {
        let devicePath = adapters[key.adapter].devicePath(key.address)
        var path: String?
        var interface = BlueZInterface.gattCharacteristic
        if operation.isCharacteristic {
            path = GATTObjects.characteristicPath(valueHandle: operation.handle, devicePath: devicePath, in: server)
        } else {
            interface = BlueZInterface.gattDescriptor
            for service in server.services {
                let servicePath = GATTObjects.path(device: devicePath, service: service)
                for chrc in service.characteristics {
                    for desc in chrc.descriptors where desc.handle == operation.handle {
                        path = GATTObjects.path(
                            characteristic: GATTObjects.path(service: servicePath, characteristic: chrc),
                            descriptor: desc)
                    }
                }
            }
        }
        guard let path else { return [] }
        return [
            Batch(
                adapter: key.adapter,
                events: [
                    .objectChanged(
                        path: path, interface: interface, changed: [Property("Value", .bytes(value))], invalidated: [])
                ])
        ]
    }
}
