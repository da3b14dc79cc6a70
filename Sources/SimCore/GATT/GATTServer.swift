import GATT

/// A virtual device's GATT server: its attributes with handles and values, as a pure state
/// machine. Answers reads and writes as an ATT server does (throwing the ATT error), and runs
/// each characteristic's `ValueBehaviour` on the simulation clock.
public struct GATTServer: Sendable {
    /// A service with its handle range.
    public struct Service: Sendable, Equatable {
        /// Its declaration handle.
        public let handle: UInt16
        /// Its last handle.
        public let endHandle: UInt16
        /// Its UUID.
        public let uuid: BluetoothUUID
        /// Primary or secondary.
        public let primary: Bool
        /// Its characteristics.
        public var characteristics: [Characteristic]
        /// The services it includes, as indices into ``GATTServer/services``.
        public let includes: [Int]
    }

    /// A characteristic with its handles and current value.
    public struct Characteristic: Sendable, Equatable {
        /// Its declaration handle (bluetoothd names the object after it: `charXXXX`).
        public let handle: UInt16
        /// Its value handle.
        public let valueHandle: UInt16
        /// Its UUID.
        public let uuid: BluetoothUUID
        /// Its properties.
        public let flags: BlueZGATTFlags.Characteristic
        /// The current value.
        public var value: [UInt8]
        /// How the value changes.
        let behaviour: ValueBehaviour
        /// How many behaviour steps ran.
        var steps = 0
        /// Its descriptors.
        public var descriptors: [Descriptor]

        /// Whether remotes may subscribe (notify or indicate).
        public var canSubscribe: Bool { flags.properties.contains(.notify) || flags.properties.contains(.indicate) }
    }

    /// A descriptor.
    public struct Descriptor: Sendable, Equatable {
        /// Its handle.
        public let handle: UInt16
        /// Its UUID.
        public let uuid: BluetoothUUID
        /// Its value.
        public var value: [UInt8]
        /// Whether remotes may write it.
        public let writable: Bool
    }

    /// The services, in handle order.
    public private(set) var services: [Service]
    /// When the world started (behaviour times count from here).
    public let start: SimInstant

    /// The longest attribute value ATT allows.
    public static let maximumValueLength = 512
    /// The Client Characteristic Configuration descriptor's UUID.
    public static let cccdUUID = BluetoothUUID(uuid16: 0x2902)
    /// The Characteristic Extended Properties descriptor's UUID.
    public static let extendedPropertiesUUID = BluetoothUUID(uuid16: 0x2900)

    /// The server for `database`, its behaviours counting from `start`, its first service at
    /// `firstHandle`.
    public init(
        _ database: GATTDatabaseSpec, start: SimInstant = .zero, firstHandle: UInt16 = GATTDatabaseSpec.firstHandle
    ) {
        self.start = start
        var next = firstHandle
        func take() -> UInt16 {
            defer { next &+= 1 }
            return next
        }
        services = database.services.map { spec in
            let handle = take()
            for _ in spec.includes { _ = take() }  // one Include declaration each
            let characteristics = spec.characteristics.map { chrc in
                let declaration = take()
                let valueHandle = take()
                var descriptors: [Descriptor] = []
                if chrc.flags.properties.contains(.notify) || chrc.flags.properties.contains(.indicate) {
                    descriptors.append(Descriptor(handle: take(), uuid: Self.cccdUUID, value: [0, 0], writable: true))
                }
                if !chrc.flags.extendedProperties.isEmpty {
                    let bits = chrc.flags.extendedProperties.rawValue
                    descriptors.append(
                        Descriptor(
                            handle: take(), uuid: Self.extendedPropertiesUUID,
                            value: [UInt8(bits & 0xFF), UInt8(bits >> 8)], writable: false))
                }
                descriptors += chrc.descriptors.map {
                    Descriptor(handle: take(), uuid: $0.uuid, value: $0.value, writable: $0.writable)
                }
                return Characteristic(
                    handle: declaration, valueHandle: valueHandle, uuid: chrc.uuid, flags: chrc.flags,
                    value: chrc.value, behaviour: chrc.behaviour, descriptors: descriptors)
            }
            if let reserved = spec.reservedHandles, Int(next - handle) < reserved {
                next = handle &+ UInt16(clamping: reserved)
            }
            return Service(
                handle: handle, endHandle: next &- 1, uuid: spec.uuid, primary: spec.primary,
                characteristics: characteristics, includes: spec.includes)
        }
    }

    /// The characteristic whose value handle is `valueHandle`.
    public func characteristic(valueHandle: UInt16) -> Characteristic? {
        for service in services {
            if let found = service.characteristics.first(where: { $0.valueHandle == valueHandle }) { return found }
        }
        return nil
    }

    private func locate(_ handle: UInt16) -> (service: Int, characteristic: Int, descriptor: Int?)? {
        for (s, service) in services.enumerated() {
            for (c, chrc) in service.characteristics.enumerated() {
                if chrc.valueHandle == handle { return (s, c, nil) }
                if let d = chrc.descriptors.firstIndex(where: { $0.handle == handle }) { return (s, c, d) }
            }
        }
        return nil
    }

    // MARK: ATT requests

    /// A (long) read of `handle` from `offset`: the value from `offset` on. Read Not Permitted
    /// without the read property; Invalid Offset past the end; Invalid Handle when unknown.
    public func read(_ handle: UInt16, offset: Int = 0) throws(ATTError) -> [UInt8] {
        guard let (s, c, d) = locate(handle) else { throw .invalidHandle }
        let chrc = services[s].characteristics[c]
        let value: [UInt8]
        if let d {
            value = chrc.descriptors[d].value
        } else {
            guard chrc.flags.properties.contains(.read) else { throw .readNotPermitted }
            value = chrc.value
        }
        guard offset <= value.count else { throw .invalidOffset }
        return Array(value[offset...])
    }

    /// A write of `bytes` at `offset` to `handle` (a write request, a long or reliable write, or
    /// a command): the value becomes the old value up to `offset` followed by `bytes`. Write Not
    /// Permitted without a write property; Invalid Offset past the end; Invalid Attribute Value
    /// Length past 512 bytes. A CCCD write sets the subscription bits.
    public mutating func write(_ handle: UInt16, _ bytes: [UInt8], offset: Int = 0) throws(ATTError) {
        guard let (s, c, d) = locate(handle) else { throw .invalidHandle }
        var chrc = services[s].characteristics[c]
        var old: [UInt8]
        if let d {
            guard chrc.descriptors[d].writable else { throw .writeNotPermitted }
            old = chrc.descriptors[d].value
        } else {
            let writable: CharacteristicProperties = [.write, .writeWithoutResponse, .authenticatedSignedWrites]
            guard
                !chrc.flags.properties.isDisjoint(with: writable)
                    || chrc.flags.extendedProperties.contains(.reliableWrite)
            else { throw .writeNotPermitted }
            old = chrc.value
        }
        guard offset <= old.count else { throw .invalidOffset }
        guard offset + bytes.count <= Self.maximumValueLength else { throw .invalidAttributeValueLength }
        old.removeSubrange(offset...)
        old += bytes
        if let d {
            chrc.descriptors[d].value = old
        } else {
            chrc.value = old
        }
        services[s].characteristics[c] = chrc
    }

    // MARK: Behaviours

    /// When the next value change is due.
    public var nextDeadline: SimInstant? {
        services.flatMap(\.characteristics).compactMap { dueTime(of: $0) }.min()
    }

    private func dueTime(of chrc: Characteristic) -> SimInstant? {
        switch chrc.behaviour {
        case .fixed: return nil
        case .cycle(let values, let period):
            guard !values.isEmpty else { return nil }
            return start.advanced(bySeconds: period * Double(chrc.steps + 1))
        case .counter(_, _, _, let period): return start.advanced(bySeconds: period * Double(chrc.steps + 1))
        case .script(let steps, let loop):
            guard let last = steps.last else { return nil }
            let round = steps.isEmpty ? 0 : chrc.steps / steps.count
            let index = steps.isEmpty ? 0 : chrc.steps % steps.count
            guard loop || round == 0 else { return nil }
            let length = max(last.at, 0.001)
            return start.advanced(bySeconds: Double(round) * length + steps[index].at)
        }
    }

    /// Runs the behaviours up to `now`: each change, in time order, as (value handle, new value).
    public mutating func advance(to now: SimInstant) -> [(valueHandle: UInt16, value: [UInt8])] {
        advanceTimed(to: now).map { ($0.valueHandle, $0.value) }
    }

    /// Like `advance(to:)`, with the time of each change (the link model paces by it).
    public mutating func advanceTimed(to now: SimInstant) -> [(at: SimInstant, valueHandle: UInt16, value: [UInt8])] {
        var changes: [(at: SimInstant, valueHandle: UInt16, value: [UInt8])] = []
        for s in services.indices {
            for c in services[s].characteristics.indices {
                var chrc = services[s].characteristics[c]
                var guardCount = 0
                while let due = dueTime(of: chrc), due <= now, guardCount < 10_000 {
                    guardCount += 1
                    chrc.steps += 1
                    chrc.value = Self.value(after: chrc.steps, of: chrc)
                    changes.append((due, chrc.valueHandle, chrc.value))
                }
                services[s].characteristics[c] = chrc
            }
        }
        return changes.sorted { $0.at < $1.at }
    }

    private static func value(after steps: Int, of chrc: Characteristic) -> [UInt8] {
        switch chrc.behaviour {
        case .fixed: return chrc.value
        case .cycle(let values, _): return values[(steps - 1) % values.count]
        case .counter(let start, let step, let format, _):
            return format.encode(start &+ step &* Int64(steps))
        case .script(let list, _): return list[(steps - 1) % list.count].value
        }
    }
}
