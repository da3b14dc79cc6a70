import BLE
import BLETesting
import DBus
import Glibc
import Synchronization

/// The GATT side of ``FakeBlueZ``: on Device1.Connect it exports one service
/// with one characteristic (read, write, write-without-response, notify) and
/// one descriptor, then sets Connected and ServicesResolved, as bluetoothd
/// does. Calls are recorded as `"Interface.Member options"`; AcquireNotify
/// and AcquireWrite hand out SOCK_SEQPACKET socket pairs (or are refused).
final class FakeGATT: Sendable {
    static let service = FakeBlueZ.devicePath + "/service0001"
    static let characteristic = service + "/char0002"
    static let descriptor = characteristic + "/desc0003"
    static let characteristicUUID = "00002a37-0000-1000-8000-00805f9b34fb"

    struct Peers {
        var notify: Int32 = -1
        var write: Int32 = -1
    }

    let refuseAcquire: Bool
    let acquireMissing: Bool
    let calls: AsyncStream<String>
    private let sink: AsyncStream<String>.Continuation
    private let peers = Mutex(Peers())

    init(refuseAcquire: Bool, acquireMissing: Bool = false) {
        self.refuseAcquire = refuseAcquire
        self.acquireMissing = acquireMissing
        (calls, sink) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    deinit {
        let peers = peers.withLock { $0 }
        if peers.notify >= 0 { close(peers.notify) }
        if peers.write >= 0 { close(peers.write) }
    }

    /// Device1's methods.
    func deviceMethods(objects: @escaping @Sendable () -> ObjectServer?) throws -> [ExportedMethod] {
        [
            try ExportedMethod("Connect", in: "", out: "") { [self] _ in
                guard let objects = objects() else { return [] }
                try self.exportDatabase(on: objects)
                try objects.setProperties(
                    [("Connected", .boolean(true)), ("ServicesResolved", .boolean(true))],
                    interface: BlueZInterface.device, at: try ObjectPath(FakeBlueZ.devicePath))
                return []
            },
            try ExportedMethod("Disconnect", in: "", out: "") { _ in
                try objects()?.setProperties(
                    [("Connected", .boolean(false)), ("ServicesResolved", .boolean(false))],
                    interface: BlueZInterface.device, at: try ObjectPath(FakeBlueZ.devicePath))
                return []
            },
        ]
    }

    /// Sends one notification packet on the AcquireNotify socket.
    func notify(_ value: [UInt8]) {
        let fd = peers.withLock { $0.notify }
        _ = value.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Reads one packet written on the AcquireWrite socket (awaited on the shared loop; `[]` at its end or
    /// past the deadline).
    func readWritten() async throws -> [UInt8] {
        let fd = peers.withLock { $0.write }
        return await readWhenReady(fd, capacity: 512) ?? []
    }

    /// Waits until the central closes its end of the AcquireNotify socket
    /// (true) or a packet arrives (false), on the shared loop.
    func notifySocketClosedByCentral() async throws -> Bool {
        let fd = peers.withLock { $0.notify }
        return await readWhenReady(fd, capacity: 64) == []
    }

    /// Hangs up the AcquireNotify socket, as bluetoothd does when the link drops.
    func hangUpNotify() {
        peers.withLock { peers in
            if peers.notify >= 0 { close(peers.notify) }
            peers.notify = -1
        }
    }

    private func record(_ call: DBusMethodCall) {
        var text = "\(call.interface ?? "").\(call.member)"
        if let options = (try? call.arguments())?.last, let entries = options.dictionaryEntries {
            for (key, value) in entries.sorted(by: { ($0.key.stringValue ?? "") < ($1.key.stringValue ?? "") }) {
                text += " \(key.stringValue ?? "?")=\(value.stringValue ?? value.unwrapped.description)"
            }
        }
        if call.member == "WriteValue", let value = (try? call.arguments())?.first?.bytesValue {
            text += " value=\(value)"
        }
        sink.yield(text)
    }

    private func socketPair(_ keep: WritableKeyPath<Peers, Int32>) throws -> [DBusValue] {
        if refuseAcquire { throw DBusError("org.bluez.Error.NotSupported", "Operation is not supported") }
        var fds: [Int32] = [-1, -1]
        guard
            fds.withUnsafeMutableBufferPointer({
                socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, $0.baseAddress)
            }) == 0
        else { throw DBusError(.failed, "socketpair") }
        peers.withLock { $0[keyPath: keep] = fds[1] }
        return [.unixFD(UnixFD(owning: fds[0])), .uint16(185)]
    }

    private func exportDatabase(on objects: ObjectServer) throws {
        guard !objects.paths.contains(try ObjectPath(Self.service)) else { return }
        try objects.export(
            try ObjectPath(Self.service),
            interfaces: [
                try ExportedInterface(
                    BlueZInterface.gattService,
                    properties: [
                        try ExportedProperty("UUID", type: .string, value: "0000180d-0000-1000-8000-00805f9b34fb"),
                        try ExportedProperty("Primary", type: .boolean, value: .boolean(true)),
                        try ExportedProperty(
                            "Device", type: .objectPath, value: .objectPath(try ObjectPath(FakeBlueZ.devicePath))),
                    ])
            ])
        var methods = [
            try ExportedMethod("ReadValue", in: "a{sv}", out: "ay") {
                [self] call in
                self.record(call)
                return [.bytes([7])]
            },
            try ExportedMethod("WriteValue", in: "aya{sv}", out: "") { [self] call in
                self.record(call)
                return []
            },
            try ExportedMethod("StartNotify", in: "", out: "") { [self] call in
                self.record(call)
                try objects.setProperty(
                    "Notifying", to: .boolean(true), interface: BlueZInterface.gattCharacteristic,
                    at: try ObjectPath(Self.characteristic))
                return []
            },
            try ExportedMethod("StopNotify", in: "", out: "") { [self] call in
                self.record(call)
                return []
            },
            try ExportedMethod("AcquireNotify", in: "a{sv}", out: "hq") { [self] call in
                self.record(call)
                return try self.socketPair(\.notify)
            },
            try ExportedMethod("AcquireWrite", in: "a{sv}", out: "hq") { [self] call in
                self.record(call)
                return try self.socketPair(\.write)
            },
        ]
        if acquireMissing { methods.removeAll { $0.name.hasPrefix("Acquire") } }
        try objects.export(
            try ObjectPath(Self.characteristic),
            interfaces: [
                try ExportedInterface(
                    BlueZInterface.gattCharacteristic, methods: methods,
                    properties: [
                        try ExportedProperty("UUID", type: .string, value: .string(Self.characteristicUUID)),
                        try ExportedProperty(
                            "Service", type: .objectPath, value: .objectPath(try ObjectPath(Self.service))),
                        try ExportedProperty(
                            "Flags", type: .array(.string),
                            value: .array(
                                .string,
                                [
                                    .string("read"), .string("write"), .string("write-without-response"),
                                    .string("notify"),
                                ])),
                        try ExportedProperty("Value", type: .array(.byte), value: .bytes([])),
                        try ExportedProperty("Notifying", type: .boolean, value: .boolean(false)),
                        try ExportedProperty("MTU", type: .uint16, value: .uint16(185)),
                    ])
            ])
        try objects.export(
            try ObjectPath(Self.descriptor),
            interfaces: [
                try ExportedInterface(
                    BlueZInterface.gattDescriptor,
                    methods: [
                        try ExportedMethod("ReadValue", in: "a{sv}", out: "ay") {
                            [self] call in
                            self.record(call)
                            return [.bytes([1, 0])]
                        },
                        try ExportedMethod("WriteValue", in: "aya{sv}", out: "") {
                            [self] call in
                            self.record(call)
                            return []
                        },
                    ],
                    properties: [
                        try ExportedProperty("UUID", type: .string, value: "00002902-0000-1000-8000-00805f9b34fb"),
                        try ExportedProperty(
                            "Characteristic", type: .objectPath,
                            value: .objectPath(try ObjectPath(Self.characteristic))),
                    ])
            ])
    }

    /// Sets the characteristic's Value (a notification through StartNotify).
    func setValue(_ value: [UInt8], on objects: ObjectServer) throws {
        try objects.setProperty(
            "Value", to: .bytes(value), interface: BlueZInterface.gattCharacteristic,
            at: try ObjectPath(Self.characteristic))
    }
}
