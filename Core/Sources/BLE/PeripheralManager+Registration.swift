/// A registration BlueZ refused: the manager's GATT application
/// (GattManager1.RegisterApplication) or advertisement
/// (LEAdvertisingManager1.RegisterAdvertisement) is not registered, and why.
public struct RegistrationFailure: Hashable, Sendable, CustomStringConvertible {
    /// What is not registered.
    public enum Kind: String, Hashable, Sendable, Comparable {
        /// The GATT application (the published services).
        case application
        /// The advertisement.
        case advertisement

        /// Application first.
        public static func < (lhs: Kind, rhs: Kind) -> Bool { lhs == .application && rhs == .advertisement }
    }

    /// What is not registered.
    public var kind: Kind
    /// BlueZ's refusal (or the call's failure).
    public var error: BLEError

    /// A failure of `kind` with `error`.
    public init(kind: Kind, error: BLEError) {
        self.kind = kind
        self.error = error
    }

    /// `GATT application not registered: <error>` / `advertisement not registered: <error>`.
    public var description: String {
        switch kind {
        case .application: "GATT application not registered: \(error)"
        case .advertisement: "advertisement not registered: \(error)"
        }
    }
}

extension PeripheralManager {
    /// What BlueZ refused to register and has not registered since: empty
    /// while the application and the advertisement (those the manager has)
    /// are registered. A later successful registration of the same kind
    /// clears its failure.
    public var registrationFailures: [RegistrationFailure] {
        state.withLock { Self.sorted($0.registrationFailures) }
    }

    /// ``registrationFailures`` now and after every change.
    public func registrationUpdates() -> AsyncStream<[RegistrationFailure]> {
        registrationBroadcast.stream(current: { registrationFailures })
    }

    /// Records the outcome of registering `kind`: `failure`, or nil for success.
    func recordRegistration(_ kind: RegistrationFailure.Kind, failure: BLEError?) {
        let changed = state.withLock { state -> [RegistrationFailure]? in
            guard state.registrationFailures[kind] != failure else { return nil }
            state.registrationFailures[kind] = failure
            return Self.sorted(state.registrationFailures)
        }
        if let changed { registrationBroadcast.yield(changed) }
    }

    private static func sorted(_ failures: [RegistrationFailure.Kind: BLEError]) -> [RegistrationFailure] {
        failures.keys.sorted().compactMap { kind in failures[kind].map { RegistrationFailure(kind: kind, error: $0) } }
    }
}
