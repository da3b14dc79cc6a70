import JSON

/// Maps the engine's clock to Unix time for the JSON the gateway gives out.
public struct GatewayClock: Sendable, Hashable {
    /// Unix milliseconds at the engine's time zero.
    public var unixOrigin: Int64

    /// A clock whose engine time zero is `unixOrigin` (Unix milliseconds).
    public init(unixOrigin: Int64) { self.unixOrigin = unixOrigin }

    /// Unix milliseconds at engine time `time`.
    public func unixMilliseconds(_ time: Duration) -> Int64 {
        unixOrigin + time.components.seconds * 1000 + time.components.attoseconds / 1_000_000_000_000_000
    }
}

/// The JSON shapes of the control methods and of `reading` events.
public enum GatewayJSON {
    /// `gateway.devices`' result: `{total, offset, limit, next, devices}`.
    public static func devices(_ all: [DeviceEntry], _ query: DevicesQuery, clock: GatewayClock) -> JSON {
        let (page, total) = query.page(all)
        let next = page.endIndex < total ? JSON.int(Int64(page.endIndex)) : .null
        return [
            "total": .int(Int64(total)), "offset": .int(Int64(query.offset)), "limit": .int(Int64(query.limit)),
            "next": next, "devices": .array(page.map { summary($0, clock: clock) }),
        ]
    }

    /// One device in `gateway.devices`.
    public static func summary(_ entry: DeviceEntry, clock: GatewayClock) -> JSON {
        [
            "address": .string(entry.address.description), "name": entry.name.map(JSON.string) ?? .null,
            "kind": .string(entry.kind.rawValue), "encrypted": .bool(entry.encrypted), "rssi": rssi(entry.rssi),
            "lastSeen": .int(clock.unixMilliseconds(entry.lastSeen)), "reports": .int(Int64(entry.reports)),
            "decoded": .int(Int64(entry.decoded)), "errors": .int(Int64(entry.errorCount)),
            "readings": .array(
                entry.readings.keys.sorted().compactMap { entry.readings[$0] }.map { reading($0, clock: clock) }),
        ]
    }

    /// `gateway.device`'s result.
    public static func device(_ entry: DeviceEntry, clock: GatewayClock) -> JSON {
        var object: JSONObject = [
            "address": .string(entry.address.description), "name": entry.name.map(JSON.string) ?? .null,
            "kind": .string(entry.kind.rawValue), "encrypted": .bool(entry.encrypted), "rssi": rssi(entry.rssi),
            "lastRssi": entry.lastRSSI.map { .int(Int64($0)) } ?? .null,
            "firstSeen": .int(clock.unixMilliseconds(entry.firstSeen)),
            "lastSeen": .int(clock.unixMilliseconds(entry.lastSeen)), "reports": .int(Int64(entry.reports)),
            "decoded": .int(Int64(entry.decoded)), "duplicates": .int(Int64(entry.duplicates)),
            "errors": counts(entry.errors),
            "readings": .array(
                entry.readings.keys.sorted().compactMap { entry.readings[$0] }.map { reading($0, clock: clock) }),
        ]
        if let (failure, at) = entry.lastError {
            object["lastError"] = [
                "reason": .string(failure.reason), "message": .string(failure.description),
                "at": .int(clock.unixMilliseconds(at)),
            ]
        } else {
            object["lastError"] = .null
        }
        object["firmware"] = entry.firmware.map(JSON.string) ?? .null
        object["deviceTypeId"] = entry.deviceTypeID.map { .int(Int64($0)) } ?? .null
        return .object(object)
    }

    /// `gateway.stats`' result.
    public static func stats(
        _ stats: GatewayStats, devices: Int, maxDevices: Int, bindKeys: Int, scan: ScanStatus? = nil
    ) -> JSON {
        var object: JSONObject = [
            "reportsIn": .int(Int64(stats.reportsIn)), "discoveries": .int(Int64(stats.discoveries)),
            "decoded": .int(Int64(stats.decoded)), "duplicatesDropped": .int(Int64(stats.duplicatesDropped)),
            "filtered": .int(Int64(stats.filtered)), "unknownFormat": .int(Int64(stats.unknownFormat)),
            "decodeErrors": counts(stats.decodeErrors), "readingsDropped": .int(Int64(stats.readingsDropped)),
            "devices": .int(Int64(devices)), "maxDevices": .int(Int64(maxDevices)),
            "devicesEvicted": .int(Int64(stats.devicesEvicted)), "devicesExpired": .int(Int64(stats.devicesExpired)),
            "updatesPublished": .int(Int64(stats.updatesPublished)),
            "updatesCoalesced": .int(Int64(stats.updatesCoalesced)), "bindKeys": .int(Int64(bindKeys)),
        ]
        if let scan { object["scan"] = ["mode": .string(scan.mode), "reason": .string(scan.reason)] }
        return .object(object)
    }

    /// A `reading` event's data: the device and the readings that changed.
    public static func update(_ update: ReadingUpdate, clock: GatewayClock) -> JSON {
        [
            "address": .string(update.address.description), "name": update.name.map(JSON.string) ?? .null,
            "kind": .string(update.kind.rawValue), "rssi": update.rssi.map { .int(Int64($0)) } ?? .null,
            "readings": .array(update.readings.map { reading($0, clock: clock) }),
        ]
    }

    /// One reading: `{name, kind, value, unit, at}` (events add `steps` or `arguments`).
    public static func reading(_ stored: StoredReading, clock: GatewayClock) -> JSON {
        let reading = stored.reading
        var object: JSONObject = ["name": .string(reading.name), "kind": .string(reading.kind.rawValue)]
        switch reading.value {
        case .number(let number): object["value"] = .double(number)
        case .flag(let flag): object["value"] = .bool(flag)
        case .text(let text): object["value"] = .string(text)
        case .event(let type, let steps, let arguments):
            object["value"] = .string(type)
            if let steps { object["steps"] = .int(Int64(steps)) }
            if let arguments { object["arguments"] = .string(arguments) }
        }
        object["unit"] = reading.unit.map(JSON.string) ?? .null
        object["at"] = .int(clock.unixMilliseconds(stored.at))
        return .object(object)
    }

    private static func rssi(_ value: Double?) -> JSON {
        value.map { .int(Int64($0.rounded())) } ?? .null
    }

    private static func counts(_ counts: [String: Int]) -> JSON {
        .object(JSONObject(counts.keys.sorted().map { ($0, JSON.int(Int64(counts[$0]!))) }))
    }
}
