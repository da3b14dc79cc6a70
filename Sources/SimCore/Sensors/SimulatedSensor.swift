import BTHomeCrypto
import GATT

/// A device whose advertisement carries readings that change over time: a BTHome v2 sensor (plain or
/// encrypted) or an Eddystone TLM beacon (docs/blesim.md, "Sensors").
///
/// The device measures every `measureSeconds`; every advertisement until the next measurement repeats the
/// same service data (the same BTHome packet id, the same encryption counter), as real sensors do. Values
/// follow each object's waveform, shifted by a phase taken from the device's address so that the copies of a
/// `repeat` differ, plus noise drawn from the address and the measurement number: the same scenario gives
/// the same bytes at the same time, whatever else happens.
public struct SimulatedSensor: Sendable, Equatable {
    /// What the service data carries.
    public enum Format: Sendable, Equatable {
        /// BTHome v2 (UUID 0xFCD2) with these objects, encrypted with `bindKey` when there is one.
        case bthome(objects: [SensorObject], bindKey: BTHomeBindKey?, packetID: Bool, triggerBased: Bool)
        /// Eddystone TLM (UUID 0xFEAA): battery voltage (V) and temperature (°C) waveforms, the PDU count, uptime.
        case eddystoneTLM(voltage: Waveform, temperature: Waveform)
    }

    /// The format.
    public var format: Format
    /// Seconds between measurements.
    public var measureSeconds: Double

    /// A sensor.
    public init(format: Format, measureSeconds: Double = 10) {
        self.format = format
        self.measureSeconds = measureSeconds
    }

    /// The service data UUID it advertises under.
    public var uuid: BluetoothUUID {
        switch format {
        case .bthome: .bthome
        case .eddystoneTLM: BluetoothUUID(uuid16: 0xFEAA)
        }
    }

    /// Which measurement is current `seconds` after the start.
    public func measurement(at seconds: Double) -> Int64 {
        Int64((max(0, seconds) / measureSeconds).rounded(.down))
    }

    /// The service data of measurement `number` by the device at `address`, `intervalMs` apart.
    public func serviceData(address: DeviceAddress, measurement number: Int64, intervalMilliseconds: Double) -> [UInt8]
    {
        let seconds = Double(number) * measureSeconds
        let phase = Self.phase(address)
        var noise = SeededGenerator(seed: Self.value(address) ^ UInt64(bitPattern: number) &* 0x9E37_79B9_7F4A_7C15)
        switch format {
        case .bthome(let objects, let bindKey, let packetID, let triggerBased):
            var payload: [UInt8] = packetID ? [0x00, UInt8(truncatingIfNeeded: number)] : []
            for object in objects.sorted(by: { $0.kind.id < $1.kind.id }) {
                payload += object.encoded(object.waveform.value(at: seconds, phase: phase, noise: &noise))
            }
            let info: UInt8 = 0x40 | (triggerBased ? 0x04 : 0)
            guard let bindKey else { return [info] + payload }
            let counter = UInt32(truncatingIfNeeded: number + 1)
            return
                (try? BTHomeEncryption.seal(
                    objects: payload, deviceInfo: info, mac: address.bytes, counter: counter, key: bindKey)) ?? [info]
        case .eddystoneTLM(let voltage, let temperature):
            let millivolts = UInt16(
                clamping: Int((voltage.value(at: seconds, phase: phase, noise: &noise) * 1000).rounded()))
            let fixed = Int16(
                clamping: Int((temperature.value(at: seconds, phase: phase, noise: &noise) * 256).rounded()))
            let pdus = UInt32(truncatingIfNeeded: Int64(seconds * 1000 / max(20, intervalMilliseconds)))
            let uptime = UInt32(truncatingIfNeeded: Int64(seconds * 10))
            return [0x20, 0x00] + millivolts.bigEndianBytes + UInt16(bitPattern: fixed).bigEndianBytes
                + pdus.bigEndianBytes + uptime.bigEndianBytes
        }
    }

    /// The longest service data it can produce (for the legacy advertising size check).
    public var longestServiceData: Int {
        switch format {
        case .bthome(let objects, let bindKey, let packetID, _):
            1 + (packetID ? 2 : 0) + objects.reduce(0) { $0 + 1 + $1.kind.length } + (bindKey == nil ? 0 : 8)
        case .eddystoneTLM: 14
        }
    }

    /// A fraction of a period in [0, 1), from the address (Fibonacci hashing): copies start apart.
    static func phase(_ address: DeviceAddress) -> Double {
        Double((value(address) &* 0x9E37_79B9_7F4A_7C15) >> 11) / Double(1 << 53)
    }

    /// The address's 48 bits.
    static func value(_ address: DeviceAddress) -> UInt64 {
        address.bytes.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }
}

/// How a simulated value moves: `base + amplitude · sin(2π (t / period + phase))` plus Gaussian noise; a
/// binary object is on while the sine is positive.
public struct Waveform: Sendable, Equatable {
    /// The mean.
    public var base: Double
    /// The swing either side of the mean.
    public var amplitude: Double
    /// Seconds per cycle (0: constant).
    public var periodSeconds: Double
    /// Standard deviation of the noise added to each measurement.
    public var noise: Double

    /// A waveform.
    public init(base: Double, amplitude: Double = 0, periodSeconds: Double = 0, noise: Double = 0) {
        self.base = base
        self.amplitude = amplitude
        self.periodSeconds = periodSeconds
        self.noise = noise
    }

    /// The value `seconds` after the start for a device at `phase` of its cycle.
    func value(at seconds: Double, phase: Double, noise generator: inout SeededGenerator) -> Double {
        let swing = periodSeconds > 0 ? amplitude * _sin(2 * Double.pi * (seconds / periodSeconds + phase)) : 0
        return base + swing + generator.gaussian(standardDeviation: noise)
    }
}

/// One BTHome object a simulated sensor sends.
public struct SensorObject: Sendable, Equatable {
    /// The BTHome objects blesim simulates.
    public enum Kind: String, Sendable, CaseIterable {
        case battery, temperature, humidity, pressure, illuminance, voltage, co2, moisture
        case opening, door, motion, window

        /// The BTHome object id.
        public var id: UInt8 {
            switch self {
            case .battery: 0x01
            case .temperature: 0x02
            case .humidity: 0x03
            case .pressure: 0x04
            case .illuminance: 0x05
            case .voltage: 0x0C
            case .opening: 0x11
            case .co2: 0x12
            case .moisture: 0x14
            case .door: 0x1A
            case .motion: 0x21
            case .window: 0x2D
            }
        }

        /// Value bytes.
        var length: Int {
            switch self {
            case .battery, .opening, .door, .motion, .window: 1
            case .temperature, .humidity, .voltage, .co2, .moisture: 2
            case .pressure, .illuminance: 3
            }
        }

        /// The unit step of the encoding (0.01 °C, 0.01 hPa, ...); 0 for binary objects.
        var factor: Double {
            switch self {
            case .temperature, .humidity, .pressure, .illuminance, .moisture: 0.01
            case .voltage: 0.001
            case .battery, .co2: 1
            case .opening, .door, .motion, .window: 0
            }
        }
    }

    /// The object.
    public var kind: Kind
    /// Its waveform.
    public var waveform: Waveform

    /// An object.
    public init(kind: Kind, waveform: Waveform) {
        self.kind = kind
        self.waveform = waveform
    }

    /// The id and the value's bytes (little-endian, clamped to the format).
    func encoded(_ value: Double) -> [UInt8] {
        guard kind.factor > 0 else { return [kind.id, value > 0 ? 1 : 0] }
        let steps = (value / kind.factor).rounded()
        let bits = 8 * kind.length
        let signed = kind == .temperature
        let lowest = signed ? -Double(1 << (bits - 1)) : 0
        let highest = signed ? Double(1 << (bits - 1)) - 1 : Double(1 << bits) - 1
        let raw = Int64(min(max(steps, lowest), highest))
        return [kind.id] + (0..<kind.length).map { UInt8(truncatingIfNeeded: raw >> (8 * Int64($0))) }
    }
}

extension FixedWidthInteger {
    fileprivate var bigEndianBytes: [UInt8] {
        (0..<(Self.bitWidth / 8)).reversed().map { UInt8(truncatingIfNeeded: self >> ($0 * 8)) }
    }
}
