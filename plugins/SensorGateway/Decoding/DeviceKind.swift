/// What kind of device the gateway heard, by the format of its advertisements.
public enum DeviceKind: String, Sendable, Hashable, CaseIterable {
    /// BTHome v2 service data (0xFCD2), plain or encrypted.
    case bthome
    /// The project's own sensor aggregator: BTHome v2 beside the
    /// Environmental Sensing service UUID (docs/profiles/sensor-aggregator.md).
    case aggregator
    /// An Apple iBeacon (manufacturer data 0x004C, `02 15`).
    case ibeacon
    /// A Google Eddystone beacon (service data 0xFEAA: UID, URL, TLM).
    case eddystone
    /// None of the above (kept only with `trackUnknown`).
    case unknown
}
