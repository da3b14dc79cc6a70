import BLE
import DBus
import GATT

extension BlueZPeripheralBackend {
    /// Exports the application's objects: the ObjectManager root, then each
    /// service, characteristic and descriptor, all behind the authorize hook.
    func export(_ layout: GATTApplicationLayout, adapter: String) throws {
        let objects = connection.objects
        objects.addObjectManager(at: layout.root, authorize: authorizer)
        for service in layout.services {
            let interface = try ExportedInterface(
                "org.bluez.GattService1",
                properties: GATTApplicationLayout.properties(of: service).map { try Self.constant($0.0, $0.1) })
            try objects.export(service.path, interfaces: [interface], authorize: authorizer)
        }
        for characteristic in layout.characteristics {
            try objects.export(
                characteristic.path, interfaces: [characteristicInterface(characteristic, adapter: adapter)],
                authorize: authorizer)
        }
        for descriptor in layout.descriptors {
            try objects.export(descriptor.path, interfaces: [descriptorInterface(descriptor)], authorize: authorizer)
        }
    }

    static func constant(_ name: String, _ value: DBusValue) throws -> ExportedProperty {
        try ExportedProperty(name, type: value.type, value: value, changeSignal: .constant)
    }

    private func characteristicInterface(
        _ entry: GATTApplicationLayout.Characteristic, adapter: String
    ) throws -> ExportedInterface {
        var properties: [ExportedProperty] = []
        for (name, value) in GATTApplicationLayout.properties(of: entry) where name != "Value" {
            properties.append(try Self.constant(name, value))
        }
        // Value: set for every notification; PropertiesChanged carries it.
        properties.append(
            try ExportedProperty("Value", type: .array(.byte), value: entry.characteristic.value.map { .bytes($0) }))
        let staticValue = entry.characteristic.value
        let id = entry.id
        let path = entry.path
        let writeType: WriteType =
            entry.characteristic.properties.contains(.writeWithoutResponse)
                && !entry.characteristic.properties.contains(.write) ? .withoutResponse : .withResponse
        let methods = [
            try ExportedMethod(
                "ReadValue", inputs: [DBusArgument("options", .dictionary(key: .string, value: .variant))],
                outputs: [DBusArgument("value", .array(.byte))]
            ) { [weak self] call in
                let options = try Self.options(of: call, at: 0)
                if let staticValue {
                    guard options.offset <= staticValue.count else {
                        throw PeripheralErrors.reply(for: .invalidOffset, access: .read)
                    }
                    return [.bytes(Array(staticValue[options.offset...]))]
                }
                guard let self else { throw DBusError(.failed, "the peripheral is gone") }
                return try await self.request(id, adapter: adapter, options: options, value: [], write: nil)
            },
            try ExportedMethod(
                "WriteValue",
                inputs: [
                    DBusArgument("value", .array(.byte)),
                    DBusArgument("options", .dictionary(key: .string, value: .variant)),
                ]
            ) { [weak self] call in
                let options = try Self.options(of: call, at: 1)
                // A prepared write bluetoothd asks us to authorize: accepted; the
                // value itself arrives with the execute.
                if options.prepareAuthorize { return [] }
                let value = try call.arguments().first?.bytesValue ?? []
                guard let self else { throw DBusError(.failed, "the peripheral is gone") }
                let type: WriteType = options.type == "command" ? .withoutResponse : writeType
                return try await self.request(id, adapter: adapter, options: options, value: value, write: type)
            },
            try ExportedMethod("StartNotify") { [weak self] _ in
                await self?.notifyStarted(id, adapter: adapter)
                return []
            },
            try ExportedMethod("StopNotify") { [weak self] _ in
                await self?.notifyStopped(id, adapter: adapter)
                return []
            },
            try ExportedMethod("Confirm") { [weak self] _ in
                self?.confirmed(path: path)
                return []
            },
        ]
        return try ExportedInterface(Self.characteristicInterface, methods: methods, properties: properties)
    }

    /// Descriptors answer reads from their model value; writes are not
    /// delivered to the BLE API (NotSupported, 0x06 to the peer).
    private func descriptorInterface(_ entry: GATTApplicationLayout.Descriptor) throws -> ExportedInterface {
        let value = entry.descriptor.value ?? []
        let methods = [
            try ExportedMethod(
                "ReadValue", inputs: [DBusArgument("options", .dictionary(key: .string, value: .variant))],
                outputs: [DBusArgument("value", .array(.byte))]
            ) { call in
                let options = try Self.options(of: call, at: 0)
                guard options.offset <= value.count else {
                    throw PeripheralErrors.reply(for: .invalidOffset, access: .read)
                }
                return [.bytes(Array(value[options.offset...]))]
            },
            try ExportedMethod(
                "WriteValue",
                inputs: [
                    DBusArgument("value", .array(.byte)),
                    DBusArgument("options", .dictionary(key: .string, value: .variant)),
                ]
            ) { _ in
                throw PeripheralErrors.reply(for: .requestNotSupported, access: .write)
            },
        ]
        return try ExportedInterface(
            "org.bluez.GattDescriptor1", methods: methods,
            properties: GATTApplicationLayout.properties(of: entry).map { try Self.constant($0.0, $0.1) })
    }

    static func options(of call: DBusMethodCall, at index: Int) throws -> GATTRequestOptions {
        let arguments = try call.arguments()
        guard arguments.indices.contains(index) else { throw DBusError(.invalidArgs, "missing options") }
        return try GATTRequestOptions(arguments[index])
    }

    /// Reports a request and waits for ``respond(to:with:)``.
    func request(
        _ characteristic: LocalCharacteristic, adapter: String, options: GATTRequestOptions, value: [UInt8],
        write: WriteType?
    ) async throws -> [DBusValue] {
        let central = await central(for: options.device, adapter: adapter)
        return try await withCheckedThrowingContinuation { pending in
            let id = state.withLock { state in
                let id = state.nextRequest
                state.nextRequest += 1
                state.pending[id] = Pending(continuation: pending, access: write == nil ? .read : .write)
                return id
            }
            continuation.yield(
                .request(
                    ATTRequestInfo(
                        id: ATTRequestID(id), central: central, characteristic: characteristic,
                        offset: options.offset, value: value, write: write, mtu: options.mtu)))
        }
    }

    func notifyStarted(_ characteristic: LocalCharacteristic, adapter: String) async {
        state.withLock { $0.notifying[characteristic, default: 0] += 1 }
        let address = await adapterAddress(adapter)
        continuation.yield(
            .subscribed(
                central: Self.unidentifiedCentral(adapterAddress: address), characteristic: characteristic,
                mtu: .minimum))
    }

    func notifyStopped(_ characteristic: LocalCharacteristic, adapter: String) async {
        let was = state.withLock { $0.notifying.removeValue(forKey: characteristic) ?? 0 }
        guard was > 0 else { return }
        let address = await adapterAddress(adapter)
        continuation.yield(
            .unsubscribed(central: Self.unidentifiedCentral(adapterAddress: address), characteristic: characteristic))
    }
}
