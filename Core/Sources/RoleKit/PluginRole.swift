/// The BLE role a plugin serves.
public enum PluginRole: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Scans, connects and talks to peripherals (GATT client).
    case central
    /// Advertises and serves a GATT database (GATT server).
    case peripheral

    /// `central` or `peripheral`.
    public var description: String { rawValue }
}
