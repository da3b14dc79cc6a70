/// A small deterministic random number generator (SplitMix64), so that a simulation run with
/// the same seed and the same inputs produces the same air, bit for bit.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator whose sequence is fixed by `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A sample of the normal distribution with mean 0 and the given standard deviation
    /// (Box-Muller); 0 when `standardDeviation` is 0, without consuming randomness.
    public mutating func gaussian(standardDeviation: Double) -> Double {
        guard standardDeviation > 0 else { return 0 }
        let u1 = Double.random(in: Double.ulpOfOne..<1, using: &self)
        let u2 = Double.random(in: 0..<1, using: &self)
        let magnitude = (-2 * _log(u1)).squareRoot()
        return standardDeviation * magnitude * _cos(2 * Double.pi * u2)
    }
}
