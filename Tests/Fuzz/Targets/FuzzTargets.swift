/// Every fuzz target, by name (docs/testing.md lists them).
public enum FuzzTargets {
    /// The targets, in the order `scripts/fuzz.sh` runs them.
    public static let all: [FuzzTarget] = [
        ControlStreamTarget.target, JSONTarget.target, RolesConfigTarget.target, DBusMessageTarget.target,
        AdvertisingTarget.target, BTHomeTarget.target, PaymentTerminalTarget.target, PaymentJournalTarget.target,
        RestorationStateTarget.target, AggregatorTextTarget.target, AggregatorConfigWriteTarget.target,
        SensorGatewayTarget.target, BlueZTreeTarget.target,
    ]

    /// The target called `name`, if there is one.
    public static func named(_ name: String) -> FuzzTarget? {
        all.first { $0.name == name }
    }
}
