import JSON

/// The persisted form of an ``AggregateState``: a JSON document, written at
/// each flush and read back at start-up.
///
/// ```json
/// {"format":"bleagent.sensor-aggregates","version":1,"savedAt":1700000000.5,
///  "sensors":{"room":[[1700000000.0,21.5],[1700000001.0,21.6]]}}
/// ```
///
/// Each sensor holds its window's samples as `[time, value]` pairs, oldest
/// first. Restoring keeps the sensors the current config still has, and
/// only the samples still inside their window.
public enum AggregateSnapshot {
    /// The `format` member's value.
    public static let format = "bleagent.sensor-aggregates"
    /// The version this build writes and reads.
    public static let version: Int64 = 1

    /// The snapshot of `state`, saved at `now`, as UTF-8 JSON.
    public static func encode(_ state: AggregateState, now: Double) -> [UInt8] {
        var sensors = JSONObject()
        for id in state.sensorIDs {
            let samples = state.windows[id]?.samples ?? []
            sensors[id] = .array(samples.map { .array([.double($0.time), .double($0.value)]) })
        }
        let document: JSON = [
            "format": .string(format), "version": .int(version), "savedAt": .double(now), "sensors": .object(sensors),
        ]
        return Array(document.serialized().utf8)
    }

    /// Restores `state`'s windows from `bytes`. Sensors the snapshot has but
    /// `state` does not are skipped (their ids are returned); samples outside
    /// the window at `now` are dropped.
    ///
    /// - Throws: ``AggregateSnapshotError`` when the bytes are not a snapshot
    ///   this build can read; `state` is then unchanged.
    public static func restore(
        _ bytes: [UInt8], into state: inout AggregateState, now: Double
    ) throws(AggregateSnapshotError) -> [String] {
        let json: JSON
        do {
            json = try JSON(parsing: bytes)
        } catch {
            throw .notJSON(error.description)
        }
        guard let object = json.objectValue else { throw .malformed("the document is not an object") }
        guard object["format"]?.stringValue == format else { throw .malformed("format is not \"\(format)\"") }
        guard let found = object["version"]?.intValue else { throw .malformed("version is missing") }
        guard found == version else { throw .unsupportedVersion(found) }
        guard let sensors = object["sensors"]?.objectValue else { throw .malformed("sensors is not an object") }
        var restored = state
        var skipped: [String] = []
        for (id, value) in sensors {
            guard let pairs = value.arrayValue else { throw .malformed("sensors.\(id) is not an array") }
            var samples: [Sample] = []
            for (index, pair) in pairs.enumerated() {
                guard let items = pair.arrayValue, items.count == 2, let time = items[0].doubleValue,
                    let sampleValue = items[1].doubleValue, time.isFinite, sampleValue.isFinite
                else { throw .malformed("sensors.\(id)[\(index)] is not a [time, value] pair of numbers") }
                samples.append(Sample(time: time, value: sampleValue))
            }
            guard state.windows[id] != nil else {
                skipped.append(id)
                continue
            }
            for sample in samples {
                _ = restored.record(SensorReading(sensor: id, value: sample.value, time: sample.time), now: now)
            }
        }
        state = restored
        return skipped
    }
}

/// Why a snapshot could not be read.
public enum AggregateSnapshotError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The bytes are not JSON (a torn or foreign file).
    case notJSON(String)
    /// JSON, but not a snapshot.
    case malformed(String)
    /// A snapshot of another version.
    case unsupportedVersion(Int64)

    /// One sentence.
    public var description: String {
        switch self {
        case .notJSON(let reason): "the snapshot is not JSON: \(reason)"
        case .malformed(let reason): "the snapshot is malformed: \(reason)"
        case .unsupportedVersion(let version): "the snapshot has version \(version); this build reads version 1"
        }
    }
}
