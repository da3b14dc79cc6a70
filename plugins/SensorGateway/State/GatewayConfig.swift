import BLE
import GATT
import JSON
import RoleKit

/// The gateway's settings, from roles.json's `roles.central.config`
/// (docs/profiles/sensor-gateway.md, "Config"). Every field is optional;
/// every unknown field and value out of range is reported with its path.
public struct GatewayConfig: Sendable {
    /// The most devices kept; a new one at a full table evicts the least recently heard.
    public var maxDevices = 2048
    /// A device unheard this long (seconds) is dropped.
    public var expirySeconds: Double = 600
    /// Keep devices whose advertisements no decoder reads (kind `unknown`).
    public var trackUnknown = false
    /// The shortest time (seconds) between two `reading` events of one device; 0: no events.
    public var eventIntervalSeconds: Double = 10
    /// The most `reading` events per second over all devices; the rest wait, coalesced per device.
    public var eventsPerSecond = 200
    /// The most readings kept per device.
    public var maxReadingsPerDevice = 32
    /// EWMA weight of a new RSSI sample, in (0, 1].
    public var rssiSmoothing = 0.3
    /// The BTHome bind key file: an absolute path, or a plain file name in
    /// the plugin's state directory; nil: no keys (encrypted sensors are not decoded).
    public var keyFile: String?
    /// Devices to keep (any rule matching); nil: all.
    public var allow: DeviceFilter?
    /// Devices to drop (any rule matching), checked before `allow`.
    public var deny: DeviceFilter?
    /// How to scan: passive through an advertisement monitor, or active (see ``ScanPlan``).
    public var scan = ScanSetting.auto

    /// The defaults.
    public init() {}

    /// Reads the plugin's `config` object; throws every problem, each named
    /// by its path (`allow.addresses[0]`).
    public init(json: JSON) throws(JSONFieldErrors) {
        if json.isNull { return }
        let report = JSONFieldReport()
        guard let fields = JSONFieldReader(json, report: report) else { throw JSONFieldErrors(report.errors) }
        fields.allowOnly([
            "maxDevices", "expirySeconds", "trackUnknown", "eventIntervalSeconds", "eventsPerSecond",
            "maxReadingsPerDevice", "rssiSmoothing", "keyFile", "allow", "deny", "scan",
        ])
        maxDevices = fields.integer("maxDevices", in: 1...100_000).map { Int($0) } ?? maxDevices
        expirySeconds = fields.number("expirySeconds", in: 1...86_400) ?? expirySeconds
        trackUnknown = fields.bool("trackUnknown") ?? trackUnknown
        eventIntervalSeconds = fields.number("eventIntervalSeconds", in: 0...86_400) ?? eventIntervalSeconds
        eventsPerSecond = fields.integer("eventsPerSecond", in: 1...100_000).map { Int($0) } ?? eventsPerSecond
        maxReadingsPerDevice =
            fields.integer("maxReadingsPerDevice", in: 1...256).map { Int($0) } ?? maxReadingsPerDevice
        rssiSmoothing = fields.number("rssiSmoothing", in: 0.01...1) ?? rssiSmoothing
        keyFile = fields.read(
            "keyFile", "an absolute path, or a plain file name in the plugin's state directory"
        ) { value -> String? in
            guard let path = value.stringValue, !path.isEmpty, path.utf8.count <= 4096, !path.contains("\0"),
                path.hasPrefix("/") || (!path.contains("/") && !path.hasPrefix("."))
            else { return nil }
            return path
        }
        allow = fields.object("allow").map(DeviceFilter.init(reading:))
        deny = fields.object("deny").map(DeviceFilter.init(reading:))
        scan =
            fields.read("scan", "one of \"auto\", \"passive\", \"active\"") { value in
                value.stringValue.flatMap(ScanSetting.init(rawValue:))
            } ?? scan
        if scan == .passive, let need = ScanPlan.activeNeed(of: self) {
            report.add(path: fields.path(of: "scan"), "\"passive\" cannot serve \(need.field): \(need.reason)")
        }
        try report.check()
    }

    /// Whether a report from `address` with `advertisement` passes the allow and deny lists.
    public func admits(_ address: DeviceAddress, _ advertisement: AdvertisementData) -> Bool {
        if let deny, deny.matches(address, advertisement) { return false }
        if let allow { return allow.matches(address, advertisement) }
        return true
    }
}

/// Rules picking devices: a device matches when any rule does.
public struct DeviceFilter: Sendable, Hashable {
    /// Addresses.
    public var addresses: Set<DeviceAddress> = []
    /// Advertised name prefixes (case-sensitive).
    public var namePrefixes: [String] = []
    /// Manufacturer data company identifiers.
    public var companyIDs: Set<UInt16> = []
    /// Service UUIDs, advertised or carrying service data.
    public var serviceUUIDs: Set<BluetoothUUID> = []

    /// Rules.
    public init(
        addresses: Set<DeviceAddress> = [], namePrefixes: [String] = [], companyIDs: Set<UInt16> = [],
        serviceUUIDs: Set<BluetoothUUID> = []
    ) {
        self.addresses = addresses
        self.namePrefixes = namePrefixes
        self.companyIDs = companyIDs
        self.serviceUUIDs = serviceUUIDs
    }

    /// Reads `{addresses, namePrefixes, companyIds, serviceUuids}`; problems go to the reader's report.
    init(reading fields: JSONFieldReader) {
        fields.allowOnly(["addresses", "namePrefixes", "companyIds", "serviceUuids"])
        addresses = Set(
            Self.items(fields, "addresses", "a device address AA:BB:CC:DD:EE:FF") {
                $0.stringValue.flatMap(DeviceAddress.init)
            })
        namePrefixes = Self.items(fields, "namePrefixes", "a non-empty string of at most 256 bytes") {
            $0.stringValue.flatMap { $0.isEmpty || $0.utf8.count > 256 ? nil : $0 }
        }
        companyIDs = Set(
            Self.items(fields, "companyIds", "an integer from 0 to 65535") {
                $0.intValue.flatMap(UInt16.init(exactly:))
            })
        serviceUUIDs = Set(
            Self.items(fields, "serviceUuids", "a UUID (\"FCD2\" or 128-bit)") {
                $0.stringValue.flatMap(BluetoothUUID.init)
            })
    }

    /// The elements of the array at `key` that `convert` reads; each one it
    /// refuses is a problem at `key[index]`.
    private static func items<T>(
        _ fields: JSONFieldReader, _ key: String, _ expected: String, _ convert: (JSON) -> T?
    ) -> [T] {
        guard let array = fields.array(key) else { return [] }
        return array.enumerated().compactMap { index, item in
            guard let value = convert(item) else {
                fields.report.add(
                    path: "\(fields.path(of: key))[\(index)]",
                    "expected \(expected), found \(JSONFieldError.describe(item))")
                return nil
            }
            return value
        }
    }

    /// Whether any rule matches.
    public func matches(_ address: DeviceAddress, _ advertisement: AdvertisementData) -> Bool {
        if addresses.contains(address) { return true }
        if !namePrefixes.isEmpty, let name = advertisement.localName,
            namePrefixes.contains(where: { name.hasPrefix($0) })
        {
            return true
        }
        if !companyIDs.isEmpty, advertisement.manufacturerData.keys.contains(where: companyIDs.contains) { return true }
        if !serviceUUIDs.isEmpty,
            advertisement.serviceUUIDs.contains(where: serviceUUIDs.contains)
                || advertisement.serviceData.keys.contains(where: serviceUUIDs.contains)
        {
            return true
        }
        return false
    }
}
