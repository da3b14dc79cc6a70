import GATT

/// Faults injected at run time (blesim's control interface) or by a scenario: what the next
/// operations on a device answer, and how late.
public struct FaultPlan: Sendable, Equatable {
    /// What an injected fault does to an operation.
    public enum Action: Sendable, Equatable {
        /// Reply with this error.
        case error(BlueZError)
        /// Never reply: the client's own deadline expires.
        case timeout
    }

    /// One rule: the next `remaining` operations on the device (on characteristics or
    /// descriptors of `uuid` only, when given; Connect counts when no uuid is given).
    public struct Rule: Sendable, Equatable {
        /// The device.
        public var address: DeviceAddress
        /// Restricts the rule to attributes with this UUID.
        public var uuid: BluetoothUUID?
        /// Operations left to fail.
        public var remaining: Int
        /// What they get.
        public var action: Action

        /// A rule.
        public init(address: DeviceAddress, uuid: BluetoothUUID? = nil, remaining: Int, action: Action) {
            self.address = address
            self.uuid = uuid
            self.remaining = remaining
            self.action = action
        }
    }

    /// Active rules, oldest first.
    public var rules: [Rule] = []
    /// Extra seconds before a device's answers (GATT operations and Connect).
    public var delays: [DeviceAddress: Double] = [:]
    /// Devices whose next link comes up without the `Connected` signal (see
    /// ``Fault/unsignalledConnect(_:)``).
    public var unsignalledConnects: Set<DeviceAddress> = []

    /// No faults.
    public init() {}

    /// Takes the fault for the next operation on `address` (on an attribute of `uuid`, or
    /// Connect when nil), consuming one use of the first matching rule.
    public mutating func take(address: DeviceAddress, uuid: BluetoothUUID?) -> Action? {
        guard
            let index = rules.firstIndex(where: { rule in
                rule.address == address && (rule.uuid == nil || rule.uuid == uuid)
            })
        else { return nil }
        let action = rules[index].action
        rules[index].remaining -= 1
        if rules[index].remaining <= 0 { rules.remove(at: index) }
        return action
    }

    /// The injected delay for `address`, seconds.
    public func delay(for address: DeviceAddress) -> Double { delays[address] ?? 0 }
}
