import JSON
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

    /// Reads `sensors[i].source`; nil when it is wrong (every problem is in the reader's report).
    init?(reading reader: JSONFieldReader) {
        switch reader.read("type", required: true, #""file", "ingest" or "simulated""#, { $0.stringValue }) {
        case "file":
            guard let file = FileSource(reading: reader) else { return nil }
            self = .file(file)
        case "ingest":
            reader.allowOnly(["type"])
            self = .ingest
        case "simulated":
            guard let simulated = SimulatedSource(reading: reader) else { return nil }
            self = .simulated(simulated)
        case let other?:
            reader.issue(
                "type",
                "expected \"file\", \"ingest\" or \"simulated\", found \(JSONFieldError.describe(.string(other)))")
            return nil
        case nil:
            return nil
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

    init?(reading reader: JSONFieldReader) {
        reader.allowOnly(["type", "path", "scale", "offset", "scalePath", "offsetPath", "pollSeconds"])
        func absolutePath(_ key: String, required: Bool = false) -> String? {
            reader.read(key, required: required, "an absolute path of at most 4096 bytes") { value in
                value.stringValue.flatMap { $0.hasPrefix("/") && $0.utf8.count <= 4096 ? $0 : nil }
            }
        }
        let path = absolutePath("path", required: true)
        let scale = reader.number("scale", in: -1e12...1e12) ?? 1
        if scale == 0 { reader.issue("scale", "must not be 0") }
        offset = reader.number("offset", in: -1e12...1e12) ?? 0
        scalePath = absolutePath("scalePath")
        offsetPath = absolutePath("offsetPath")
        pollSeconds = reader.number("pollSeconds", in: 0.1...86_400) ?? 10
        guard let path, scale != 0 else { return nil }
        self.path = path
        self.scale = scale
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

    init?(reading reader: JSONFieldReader) {
        reader.allowOnly([
            "type", "waveform", "base", "amplitude", "periodSeconds", "noise", "seed", "pollSeconds",
        ])
        waveform = reader.choice("waveform") ?? .sine
        let base = reader.number("base", in: -1e9...1e9, required: true)
        amplitude = reader.number("amplitude", in: 0...1e9) ?? 0
        periodSeconds = reader.number("periodSeconds", in: 1...604_800) ?? 60
        noise = reader.number("noise", in: 0...1e9) ?? 0
        seed = UInt64(reader.integer("seed", in: 0...Int64.max) ?? 1)
        pollSeconds = reader.number("pollSeconds", in: 0.1...86_400) ?? 1
        guard let base else { return nil }
        self.base = base
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
