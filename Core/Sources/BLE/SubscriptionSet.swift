import GATT

/// Names a remote characteristic independently of BlueZ object paths, so a
/// subscription survives reconnects and restarts.
public struct CharacteristicReference: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The peripheral.
    public var peripheral: PeripheralIdentifier
    /// The service's UUID.
    public var service: BluetoothUUID
    /// The characteristic's UUID.
    public var characteristic: BluetoothUUID
    /// Which of several characteristics with the same UUIDs (0 for the first,
    /// in handle order).
    public var instance: Int

    /// A reference to characteristic `characteristic` of service `service` on `peripheral`.
    public init(
        peripheral: PeripheralIdentifier, service: BluetoothUUID, characteristic: BluetoothUUID, instance: Int = 0
    ) {
        self.peripheral = peripheral
        self.service = service
        self.characteristic = characteristic
        self.instance = instance
    }

    /// Orders by peripheral, service, characteristic, instance.
    public static func < (lhs: CharacteristicReference, rhs: CharacteristicReference) -> Bool {
        (lhs.peripheral, lhs.service, lhs.characteristic, lhs.instance)
            < (rhs.peripheral, rhs.service, rhs.characteristic, rhs.instance)
    }

    /// `peripheral/service/characteristic#instance`.
    public var description: String { "\(peripheral)/\(service.shortString)/\(characteristic.shortString)#\(instance)" }
}

/// The subscriptions the agent wants, as its own state (BlueZ's notify
/// sessions die with the link and with bluetoothd), and the plan that
/// restores each of them exactly once after every reconnect.
///
/// Each link-up gets a new generation number. ``linkUp(_:)`` returns the
/// subscriptions to start (StartNotify/AcquireNotify) for that link and marks
/// them started; asking again for the same link returns nothing, so a doubled
/// Connected/ServicesResolved signal never subscribes twice. ``linkDown(_:)``
/// marks them inactive so the next link restores them.
struct SubscriptionSet: Sendable {
    /// Where one subscription stands.
    public enum Status: Hashable, Sendable {
        /// Wanted, not active on the current link.
        case inactive
        /// Start requested on link generation `generation`, not yet confirmed.
        case starting(generation: UInt64)
        /// Active on link generation `generation`.
        case active(generation: UInt64)
    }

    private var wanted: [CharacteristicReference: Status] = [:]
    private var links: [PeripheralIdentifier: UInt64] = [:]
    private var nextGeneration: UInt64 = 1

    /// No subscriptions.
    public init() {}

    /// The wanted subscriptions, sorted.
    public var references: [CharacteristicReference] { wanted.keys.sorted() }

    /// Whether no subscription is wanted.
    public var isEmpty: Bool { wanted.isEmpty }

    /// The status of `reference`, nil when not wanted.
    public func status(of reference: CharacteristicReference) -> Status? { wanted[reference] }

    /// Wants `reference`; returns true when it should be started now (the
    /// peripheral is connected and it was not already wanted).
    public mutating func subscribe(_ reference: CharacteristicReference) -> Bool {
        guard wanted[reference] == nil else { return false }
        guard let generation = links[reference.peripheral] else {
            wanted[reference] = .inactive
            return false
        }
        wanted[reference] = .starting(generation: generation)
        return true
    }

    /// No longer wants `reference`; returns true when it was started on the
    /// current link (so StopNotify is due).
    public mutating func unsubscribe(_ reference: CharacteristicReference) -> Bool {
        guard let status = wanted.removeValue(forKey: reference) else { return false }
        if case .inactive = status { return false }
        return true
    }

    /// The peripheral's link came up (services resolved): a new generation.
    /// Returns the generation and the subscriptions to start, each once.
    public mutating func linkUp(
        _ peripheral: PeripheralIdentifier
    ) -> (generation: UInt64, toStart: [CharacteristicReference]) {
        if let current = links[peripheral] { return (current, []) }
        let generation = nextGeneration
        nextGeneration += 1
        links[peripheral] = generation
        var toStart: [CharacteristicReference] = []
        for reference in wanted.keys.sorted() where reference.peripheral == peripheral {
            wanted[reference] = .starting(generation: generation)
            toStart.append(reference)
        }
        return (generation, toStart)
    }

    /// The link dropped (or bluetoothd left): every subscription on it is inactive.
    public mutating func linkDown(_ peripheral: PeripheralIdentifier) {
        links[peripheral] = nil
        for reference in wanted.keys where reference.peripheral == peripheral { wanted[reference] = .inactive }
    }

    /// BlueZ confirmed the start on `generation`. A confirmation for an older
    /// link is ignored.
    public mutating func started(_ reference: CharacteristicReference, generation: UInt64) {
        guard wanted[reference] == .starting(generation: generation) else { return }
        wanted[reference] = .active(generation: generation)
    }

    /// Starting failed on `generation`; returns true when a retry is due on
    /// the same link (it stays wanted and is retried on the next link anyway).
    public mutating func startFailed(_ reference: CharacteristicReference, generation: UInt64) -> Bool {
        guard wanted[reference] == .starting(generation: generation) else { return false }
        wanted[reference] = .inactive
        return links[reference.peripheral] == generation
    }

    /// Marks `reference` starting again on the current link (a retry); returns
    /// its generation, or nil when it is not wanted or not connected.
    public mutating func retry(_ reference: CharacteristicReference) -> UInt64? {
        guard wanted[reference] == .inactive, let generation = links[reference.peripheral] else { return nil }
        wanted[reference] = .starting(generation: generation)
        return generation
    }
}
