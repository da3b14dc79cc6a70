import JSON
import PluginSupport
import RoleKit

/// Where a sensor's readings come from (`sensors[i].source`, chosen by `type`).
public enum SensorSource: Sendable, Hashable {
    /// A file holding a number, polled: hwmon, IIO, or anything else.
    case file(FileSource)
    /// Readings sent to the ingest socket under the sensor's id.
    case ingest
    /// A deterministic simulated signal.
    case simulated(SimulatedSource)

    /// How often the source is read, in seconds; nil for ingest.
    public var pollSeconds: Double? {
        switch self {
        case .file(let file): file.pollSeconds
        case .ingest: nil
        case .simulated(let simulated): simulated.pollSeconds
        }
    }

    init(reading reader: PluginConfigReader) throws(PluginConfigError) {
        switch try reader.require("type").stringValue {
        case "file": self = .file(try FileSource(reading: reader))
        case "ingest":
            try reader.allowOnly(["type"])
            self = .ingest
        case "simulated": self = .simulated(try SimulatedSource(reading: reader))
        default: throw PluginConfigError(path: reader.field("type"), "expected \"file\", \"ingest\" or \"simulated\"")
        }
    }
}

/// A sensor read from a file: `value = (number in path + offset) * scale`.
///
/// hwmon `temp1_input` holds millidegrees: `scale` 0.001. An IIO channel has
/// `in_temp_raw`, `in_temp_offset` and `in_temp_scale` (the result in
/// millidegrees): name the raw file in `path`, the others in `offsetPath`
/// and `scalePath`, and set `scale` 0.001 to reach degrees; the file scale
/// multiplies the configured one.
public struct FileSource: Sendable, Hashable {
    /// The file holding the raw number.
    public var path: String
    /// A fixed factor (default 1).
    public var scale: Double
    /// A fixed offset added before scaling (default 0).
    public var offset: Double
    /// A file holding a further factor (IIO `*_scale`), read at each poll.
    public var scalePath: String?
    /// A file holding a further offset (IIO `*_offset`), read at each poll.
    public var offsetPath: String?
    /// Seconds between reads.
    public var pollSeconds: Double

    /// A file source; see each property.
    public init(
        path: String, scale: Double = 1, offset: Double = 0, scalePath: String? = nil, offsetPath: String? = nil,
        pollSeconds: Double
    ) {
        self.path = path
        self.scale = scale
        self.offset = offset
        self.scalePath = scalePath
        self.offsetPath = offsetPath
        self.pollSeconds = pollSeconds
    }

    init(reading reader: PluginConfigReader) throws(PluginConfigError) {
        try reader.allowOnly(["type", "path", "scale", "offset", "scalePath", "offsetPath", "pollSeconds"])
        func absolutePath(_ key: String) throws(PluginConfigError) -> String? {
            guard let path = try reader.string(key, maxLength: 4096) else { return nil }
            guard path.hasPrefix("/") else {
                throw PluginConfigError(path: reader.field(key), "expected an absolute path")
            }
            return path
        }
        guard let path = try absolutePath("path") else {
            throw PluginConfigError(path: reader.field("path"), "is required")
        }
        self.path = path
        scale = try reader.number("scale", in: -1e12...1e12) ?? 1
        guard scale != 0 else { throw PluginConfigError(path: reader.field("scale"), "must not be 0") }
        offset = try reader.number("offset", in: -1e12...1e12) ?? 0
        scalePath = try absolutePath("scalePath")
        offsetPath = try absolutePath("offsetPath")
        pollSeconds = try reader.number("pollSeconds", in: 0.1...86_400) ?? 10
    }
}

/// A simulated sensor: `base + amplitude * shape(t / period) + noise`, where
/// the noise at each poll tick comes from a seeded generator. The same seed
/// and tick always give the same value (see ``SimulatedWaveform``).
public struct SimulatedSource: Sendable, Hashable {
    /// The wave's shape.
    public var waveform: WaveformShape
    /// The centre value.
    public var base: Double
    /// Half the peak-to-peak swing.
    public var amplitude: Double
    /// The period of the wave, in seconds.
    public var periodSeconds: Double
    /// The largest noise added to a sample (uniform in ±noise).
    public var noise: Double
    /// The noise generator's seed.
    public var seed: UInt64
    /// Seconds between samples.
    public var pollSeconds: Double

    /// A simulated source; see each property.
    public init(
        waveform: WaveformShape, base: Double, amplitude: Double = 0, periodSeconds: Double = 60, noise: Double = 0,
        seed: UInt64 = 1, pollSeconds: Double = 1
    ) {
        self.waveform = waveform
        self.base = base
        self.amplitude = amplitude
        self.periodSeconds = periodSeconds
        self.noise = noise
        self.seed = seed
        self.pollSeconds = pollSeconds
    }

    init(reading reader: PluginConfigReader) throws(PluginConfigError) {
        try reader.allowOnly([
            "type", "waveform", "base", "amplitude", "periodSeconds", "noise", "seed", "pollSeconds",
        ])
        let shapeName = try reader.string("waveform") ?? WaveformShape.sine.rawValue
        guard let shape = WaveformShape(rawValue: shapeName) else {
            let names = WaveformShape.allCases.map(\.rawValue).joined(separator: ", ")
            throw PluginConfigError(path: reader.field("waveform"), "expected one of \(names)")
        }
        waveform = shape
        guard let base = try reader.number("base", in: -1e9...1e9) else {
            throw PluginConfigError(path: reader.field("base"), "is required")
        }
        self.base = base
        amplitude = try reader.number("amplitude", in: 0...1e9) ?? 0
        periodSeconds = try reader.number("periodSeconds", in: 1...604_800) ?? 60
        noise = try reader.number("noise", in: 0...1e9) ?? 0
        seed = UInt64(try reader.integer("seed", in: 0...Int64.max) ?? 1)
        pollSeconds = try reader.number("pollSeconds", in: 0.1...86_400) ?? 1
    }
}

/// The shape of a simulated wave over one period (phase 0 to 1).
public enum WaveformShape: String, Sendable, Hashable, CaseIterable {
    /// sin(2π phase).
    case sine
    /// +1 for the first half, -1 for the second.
    case square
    /// Rises linearly from -1 to +1.
    case sawtooth
    /// 0: the value is `base` plus noise.
    case constant
}
