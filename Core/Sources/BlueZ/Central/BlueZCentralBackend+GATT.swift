import BLE
import DBus
import GATT

extension BlueZCentralBackend {
    /// GattCharacteristic1.ReadValue / GattDescriptor1.ReadValue with `offset`.
    public func readValue(attribute: String, offset: Int) async throws(BLEError) -> [UInt8] {
        let reply = try await call(
            attribute, interface(of: attribute), "ReadValue", [BlueZNames.gattOptions(offset: offset)])
        guard let value = (try? reply.arguments())?.first?.bytesValue else {
            throw BLEError(.failed, message: "ReadValue replied \(reply.signature)")
        }
        return value
    }

    /// WriteValue (`type: "request"` for characteristics; descriptors take no
    /// type), or for `.withoutResponse` the AcquireWrite socket, falling back
    /// to WriteValue `type: "command"` when BlueZ refuses to hand one out.
    public func writeValue(attribute: String, value: [UInt8], type: WriteType) async throws(BLEError) {
        let isDescriptor = gate.isDescriptor(attribute)
        if type == .withoutResponse && !isDescriptor && options.acquireWrite {
            if try await writeThroughSocket(attribute, value) { return }
        }
        let typeOption: String? =
            isDescriptor
            ? nil : (type == .withResponse ? BlueZNames.WriteTypeOption.request : BlueZNames.WriteTypeOption.command)
        _ = try await call(
            attribute, interface(of: attribute), "WriteValue",
            [.bytes(value), BlueZNames.gattOptions(type: typeOption)])
    }

    /// AcquireNotify (unless turned off or refused before), falling back to
    /// StartNotify. A second StartNotify while BlueZ still registers the
    /// first answers InProgress; BlueZ keeps the session, so it is success.
    /// AcquireNotify answers InProgress while another client holds a
    /// StartNotify session (gatt-client.c's `characteristic_acquire_notify`):
    /// StartNotify then joins those sessions; AcquireNotify is tried again next time.
    public func startNotify(characteristic: String) async throws(BLEError) {
        let acquired = sockets.withLock { $0.notify[characteristic] != nil || $0.started.contains(characteristic) }
        if acquired { return }
        if options.acquireNotify && !sockets.withLock({ $0.notifyRefused.contains(characteristic) }) {
            do throws(BLEError) {
                let (fd, mtu) = try await acquire(characteristic, "AcquireNotify")
                sockets.withLock { $0.notify[characteristic] = fd }
                loop.add(fd: fd, path: characteristic, reads: true, mtu: mtu)
                return
            } catch  where Self.isRefusal(error) {
                _ = sockets.withLock { $0.notifyRefused.insert(characteristic) }
            } catch  where error.code == .inProgress {
                // other clients' StartNotify sessions: join them below
            }
        }
        do throws(BLEError) {
            _ = try await call(characteristic, BlueZInterface.gattCharacteristic, "StartNotify")
        } catch  where error.code == .inProgress {
            // the registration is pending in BlueZ: our session exists
        }
        _ = sockets.withLock { $0.started.insert(characteristic) }
    }

    /// Stops or resumes reading the AcquireNotify socket of `characteristic`
    /// (values wait in the socket, then in bluetoothd, meanwhile); nothing for
    /// StartNotify, whose values come on the bus.
    public func setNotificationsPaused(_ paused: Bool, characteristic: String) {
        guard let fd = sockets.withLock({ $0.notify[characteristic] }) else { return }
        loop.setPaused(paused, fd: fd)
    }

    /// Closes the AcquireNotify socket (BlueZ then unsubscribes) or calls StopNotify.
    public func stopNotify(characteristic: String) async throws(BLEError) {
        let (fd, started) = sockets.withLock { sockets in
            (sockets.notify.removeValue(forKey: characteristic), sockets.started.remove(characteristic) != nil)
        }
        if let fd {
            loop.remove(fd: fd)
            return
        }
        // No socket and no StartNotify session of ours (the link dropped and
        // took the socket, or bluetoothd restarted): nothing to stop.
        guard started else { return }
        _ = try await call(characteristic, BlueZInterface.gattCharacteristic, "StopNotify")
    }

    // MARK: Fast paths

    /// Writes through the AcquireWrite socket; false when BlueZ refused the
    /// socket (the caller falls back to WriteValue).
    private func writeThroughSocket(_ characteristic: String, _ value: [UInt8]) async throws(BLEError) -> Bool {
        var fd = sockets.withLock { $0.write[characteristic] }
        if fd == nil {
            if sockets.withLock({ $0.writeRefused.contains(characteristic) }) { return false }
            do throws(BLEError) {
                let (acquired, mtu) = try await acquire(characteristic, "AcquireWrite")
                sockets.withLock { $0.write[characteristic] = acquired }
                loop.add(fd: acquired, path: characteristic, reads: false, mtu: mtu)
                fd = acquired
            } catch  where Self.isRefusal(error) {
                _ = sockets.withLock { $0.writeRefused.insert(characteristic) }
                return false
            }
        }
        guard let fd else { return false }
        let device = Self.devicePath(of: characteristic)
        while true {
            switch loop.send(value, fd: fd) {
            case .sent: return true
            case .closed:
                _ = sockets.withLock { $0.write.removeValue(forKey: characteristic) }
                throw BLEError(.notConnected, message: "AcquireWrite socket closed")
            case .full:
                gate.yield(.writeWithoutResponseFlow(devicePath: device, canSend: false))
                let writable = await loop.waitWritable(fd: fd)
                gate.yield(.writeWithoutResponseFlow(devicePath: device, canSend: true))
                if !writable {
                    _ = sockets.withLock { $0.write.removeValue(forKey: characteristic) }
                    throw BLEError(.notConnected, message: "AcquireWrite socket closed")
                }
            }
        }
    }

    /// AcquireNotify / AcquireWrite: `(h fd, q mtu)`.
    private func acquire(_ characteristic: String, _ member: String) async throws(BLEError) -> (Int32, Int) {
        let reply = try await call(
            characteristic, BlueZInterface.gattCharacteristic, member, [BlueZNames.noOptions])
        guard let arguments = try? reply.arguments(), arguments.count == 2,
            case .unixFD(let socket) = arguments[0], let fd = socket.take()
        else {
            throw BLEError(.failed, message: "\(member) replied \(reply.signature)")
        }
        return (fd, Int(arguments[1].integerValue ?? 23))
    }

    /// The acquire call was refused, so the D-Bus method is tried instead:
    /// BlueZ's NotSupported, NotPermitted ("Notify acquired" / already
    /// notifying) or Failed, and whatever another BlueZ implementation answers
    /// (UnknownMethod or UnknownInterface where it has no AcquireNotify /
    /// AcquireWrite, AccessDenied from its bus policy, any other error). Not a
    /// refusal: InProgress (handled by the caller), a call that timed out or was
    /// cancelled, bluetoothd gone, and the object or link gone
    /// (`org.bluez.Error.NotConnected`, UnknownObject).
    static func isRefusal(_ error: BLEError) -> Bool {
        switch error.code {
        case .inProgress, .timeout, .cancelled, .unavailable: return false
        case .notConnected:
            let name = error.bluezError?.name.rawValue
            return name == "org.freedesktop.DBus.Error.UnknownMethod"
                || name == "org.freedesktop.DBus.Error.UnknownInterface"
        default: return true
        }
    }

    /// The device a GATT object belongs to: the path up to its `dev_...` part.
    static func devicePath(of path: String) -> String {
        var components: [Substring] = []
        for component in path.split(separator: "/") {
            components.append(component)
            if component.hasPrefix("dev_") { break }
        }
        return "/" + components.joined(separator: "/")
    }

    func interface(of path: String) -> String {
        gate.isDescriptor(path) ? BlueZInterface.gattDescriptor : BlueZInterface.gattCharacteristic
    }

    /// A socket read or closed: notifications go to the manager; a closed
    /// socket is forgotten (the next StartNotify or write acquires again).
    static func socketEvent(_ event: SocketLoop.Event, gate: EventGate, sockets: SocketTable) {
        switch event {
        case .packet(let path, let value):
            gate.yield(.notification(characteristicPath: path, value: value), endBatch: false)
        case .batchEnded:
            gate.batchEnded()
        case .closed(let path, let fd):
            // Only if it is still the registered socket: a new one may have
            // been acquired for the path meanwhile.
            sockets.withLock { sockets in
                if sockets.notify[path] == fd { sockets.notify[path] = nil }
                if sockets.write[path] == fd { sockets.write[path] = nil }
            }
        }
    }

    /// The characteristic's object went away (the device was removed, or its
    /// database changed): its sockets, StartNotify session and refusals go too,
    /// so a new object at the same path starts afresh.
    static func forget(characteristic path: String, sockets: SocketTable, loop: SocketLoop) {
        let fds = sockets.withLock { sockets -> [Int32] in
            sockets.started.remove(path)
            sockets.notifyRefused.remove(path)
            sockets.writeRefused.remove(path)
            return [sockets.notify.removeValue(forKey: path), sockets.write.removeValue(forKey: path)].compactMap { $0 }
        }
        fds.forEach { loop.remove(fd: $0) }
    }

    /// bluetoothd left: its sockets are dead and its notify sessions gone.
    static func forgetSockets(sockets: SocketTable, loop: SocketLoop) {
        let fds = sockets.withLock { sockets -> [Int32] in
            let fds = Array(sockets.notify.values) + Array(sockets.write.values)
            sockets = Sockets()
            return fds
        }
        fds.forEach { loop.remove(fd: $0) }
    }
}

/// How notifications of a characteristic reach the backend.
public enum NotifyTransport: Hashable, Sendable {
    /// An AcquireNotify socket (one packet per value).
    case acquiredSocket
    /// StartNotify, values as PropertiesChanged on `Value`.
    case startNotify
}

extension BlueZCentralBackend {
    /// How `characteristic` notifies now, or nil when it does not (for
    /// diagnostics and tests).
    public func notifyTransport(of characteristic: String) -> NotifyTransport? {
        sockets.withLock { sockets in
            if sockets.notify[characteristic] != nil { return .acquiredSocket }
            if sockets.started.contains(characteristic) { return .startNotify }
            return nil
        }
    }

    /// Whether writes without response to `characteristic` go through an
    /// AcquireWrite socket now.
    public func hasWriteSocket(for characteristic: String) -> Bool {
        sockets.withLock { $0.write[characteristic] != nil }
    }
}
