import Glibc

/// The value a ``SimulatedSource`` gives at poll tick `k` (time
/// `k * pollSeconds` from the start): a pure function of the source and `k`,
/// so a seed replays the same series in every run.
public enum SimulatedWaveform {
    /// `base + amplitude * shape(phase) + noise(seed, k)`, noise uniform in
    /// ±`noise`.
    public static func value(of source: SimulatedSource, tick: UInt64) -> Double {
        let elapsed = Double(tick) * source.pollSeconds
        var phase = (elapsed / source.periodSeconds).truncatingRemainder(dividingBy: 1)
        if phase < 0 { phase += 1 }
        let shape: Double
        switch source.waveform {
        case .sine: shape = sin(2 * Double.pi * phase)
        case .square: shape = phase < 0.5 ? 1 : -1
        case .sawtooth: shape = 2 * phase - 1
        case .constant: shape = 0
        }
        let unit = Double(mix(source.seed &+ 0x9E37_79B9_7F4A_7C15 &* (tick &+ 1)) >> 11) / Double(1 << 53)
        return source.base + source.amplitude * shape + source.noise * (2 * unit - 1)
    }

    /// SplitMix64's finaliser: a well-mixed 64-bit value from any input.
    static func mix(_ input: UInt64) -> UInt64 {
        var z = input
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
