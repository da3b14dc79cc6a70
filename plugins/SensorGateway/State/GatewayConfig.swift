import BLE
import GATT
import JSON
import PluginSupport
import RoleKit

/// The gateway's settings, from roles.json's `roles.central.config`
/// (docs/profiles/sensor-gateway.md, "Config"). Every field is optional; an
/// unknown field or a value out of range is a `PluginConfigError` naming it.
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

    /// The defaults.
    public init() {}

    /// Reads the plugin's `config` object.
    public init(json: JSON) throws(PluginConfigError) {
        if json.isNull { return }
        let fields = try PluginConfigReader(json, path: "")
        try fields.allowOnly([
            "maxDevices", "expirySeconds", "trackUnknown", "eventIntervalSeconds", "eventsPerSecond",
            "maxReadingsPerDevice", "rssiSmoothing", "keyFile", "allow", "deny",
        ])
        maxDevices = try fields.integer("maxDevices", in: 1...100_000).map { Int($0) } ?? maxDevices
        expirySeconds = try fields.number("expirySeconds", in: 1...86_400) ?? expirySeconds
        trackUnknown = try fields.bool("trackUnknown") ?? trackUnknown
        eventIntervalSeconds = try fields.number("eventIntervalSeconds", in: 0...86_400) ?? eventIntervalSeconds
        eventsPerSecond = try fields.integer("eventsPerSecond", in: 1...100_000).map { Int($0) } ?? eventsPerSecond
        maxReadingsPerDevice =
            try fields.integer("maxReadingsPerDevice", in: 1...256).map { Int($0) } ?? maxReadingsPerDevice
        rssiSmoothing = try fields.number("rssiSmoothing", in: 0.01...1) ?? rssiSmoothing
        if let value = fields.object["keyFile"] {
            guard let path = value.stringValue, !path.isEmpty, path.utf8.count <= 4096, !path.contains("\0"),
                path.hasPrefix("/") || (!path.contains("/") && !path.hasPrefix("."))
            else {
                throw PluginConfigError(
                    path: "keyFile", "expected an absolute path, or a plain file name in the plugin's state directory")
            }
            keyFile = path
        }
        allow = try fields.object["allow"].map { json throws(PluginConfigError) in try DeviceFilter(json, path: "allow")
        }
        deny = try fields.object["deny"].map { json throws(PluginConfigError) in try DeviceFilter(json, path: "deny") }
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

    /// Reads `{addresses, namePrefixes, companyIds, serviceUuids}` at `path`.
    init(_ json: JSON, path: String) throws(PluginConfigError) {
        let fields = try PluginConfigReader(json, path: path)
        try fields.allowOnly(["addresses", "namePrefixes", "companyIds", "serviceUuids"])
        for (index, text) in try fields.strings("addresses").enumerated() {
            guard let address = DeviceAddress(text) else {
                throw PluginConfigError(path: "\(path).addresses[\(index)]", "expected AA:BB:CC:DD:EE:FF")
            }
            addresses.insert(address)
        }
        namePrefixes = try fields.strings("namePrefixes")
        for (index, value) in (fields.object["companyIds"]?.arrayValue ?? []).enumerated() {
            guard let number = value.intValue, let id = UInt16(exactly: number) else {
                throw PluginConfigError(path: "\(path).companyIds[\(index)]", "expected an integer from 0 to 65535")
            }
            companyIDs.insert(id)
        }
        if let value = fields.object["companyIds"], value.arrayValue == nil {
            throw PluginConfigError(path: "\(path).companyIds", "expected an array of integers")
        }
        for (index, text) in try fields.strings("serviceUuids").enumerated() {
            guard let uuid = BluetoothUUID(text) else {
                throw PluginConfigError(path: "\(path).serviceUuids[\(index)]", "expected a UUID (\"FCD2\" or 128-bit)")
            }
            serviceUUIDs.insert(uuid)
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
