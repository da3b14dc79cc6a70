import BTHomeCrypto
import GATT

extension Scenario {
    /// A device's `sensor` (docs/blesim.md, "Sensors").
    static func parseSensor(_ field: ScenarioField) throws(ScenarioError) -> SimulatedSensor {
        let keys = try field.object(allowing: [
            "format", "measureSeconds", "bindKey", "packetId", "triggerBased", "objects", "voltage", "temperature",
        ])
        guard let format = keys["format"] else { throw ScenarioError(path: field.child("format"), message: "missing") }
        let measure = try keys["measureSeconds"]?.number(in: 0.05...86_400) ?? 10
        switch try format.string() {
        case "bthome":
            for key in ["voltage", "temperature"] where keys[key] != nil {
                throw ScenarioError(path: field.child(key), message: "only with format eddystoneTLM")
            }
            var bindKey: BTHomeBindKey?
            if let hex = keys["bindKey"] {
                guard let key = BTHomeBindKey(hex: try hex.string()) else { throw hex.error("expected 32 hex digits") }
                bindKey = key
            }
            guard let list = keys["objects"] else {
                throw ScenarioError(path: field.child("objects"), message: "missing")
            }
            let objects = try list.array().map { (item) throws(ScenarioError) -> SensorObject in
                let entry = try item.object(allowing: ["kind", "base", "amplitude", "periodSeconds", "noise"])
                guard let kindField = entry["kind"] else {
                    throw ScenarioError(path: item.child("kind"), message: "missing")
                }
                guard let kind = SensorObject.Kind(rawValue: try kindField.string()) else {
                    throw kindField.error(
                        "expected one of \(SensorObject.Kind.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                return SensorObject(kind: kind, waveform: try parseWaveform(entry, binary: kind.factor == 0))
            }
            guard !objects.isEmpty else { throw list.error("expected at least one object") }
            return SimulatedSensor(
                format: .bthome(
                    objects: objects, bindKey: bindKey, packetID: try keys["packetId"]?.bool() ?? true,
                    triggerBased: try keys["triggerBased"]?.bool() ?? false),
                measureSeconds: measure)
        case "eddystoneTLM":
            for key in ["bindKey", "packetId", "triggerBased", "objects"] where keys[key] != nil {
                throw ScenarioError(path: field.child(key), message: "only with format bthome")
            }
            func waveform(_ key: String, default base: Double) throws(ScenarioError) -> Waveform {
                guard let item = keys[key] else { return Waveform(base: base) }
                return try parseWaveform(
                    try item.object(allowing: ["base", "amplitude", "periodSeconds", "noise"]), binary: false)
            }
            return SimulatedSensor(
                format: .eddystoneTLM(
                    voltage: try waveform("voltage", default: 3.0),
                    temperature: try waveform("temperature", default: 20)),
                measureSeconds: measure)
        default:
            throw format.error("expected bthome or eddystoneTLM")
        }
    }

    private static func parseWaveform(_ keys: [String: ScenarioField], binary: Bool) throws(ScenarioError) -> Waveform {
        Waveform(
            base: try keys["base"]?.number(in: -1e7...1e7) ?? (binary ? 0 : 0),
            amplitude: try keys["amplitude"]?.number(in: 0...1e7) ?? (binary ? 1 : 0),
            periodSeconds: try keys["periodSeconds"]?.number(in: 0...1e7) ?? 0,
            noise: try keys["noise"]?.number(in: 0...1e6) ?? 0)
    }
}
