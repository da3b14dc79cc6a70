/// Limits and policies for one parse.
public struct JSONParseOptions: Sendable, Hashable {
    /// What to do with an integer outside the range of `Int64`.
    public enum LargeIntegerPolicy: Sendable, Hashable {
        /// Throw ``JSONParseError/Kind/numberOutOfRange`` at the number.
        case reject
        /// Read it as the nearest `Double` (exact up to 2^53, rounded beyond),
        /// as JavaScript does.
        case double
    }

    /// The largest accepted ``maxDepth``; larger settings act as this one.
    /// It bounds the recursion that converts and destroys values.
    public static let maxDepthCeiling = 1_000

    /// The largest accepted ``maxInputBytes`` (1 GiB); larger settings act as
    /// this one. json-c reads at most 2 GiB at once.
    public static let maxInputBytesCeiling = 1 << 30

    /// How many arrays and objects may be open at once: `1` is a scalar or a
    /// flat array or object, `[[1]]` needs 2, and 0 allows only scalars.
    /// Default 64; clamped to `0...maxDepthCeiling`.
    public var maxDepth: Int

    /// The longest accepted input in bytes (UTF-8). Default 1 MiB; clamped to
    /// `0...maxInputBytesCeiling`.
    public var maxInputBytes: Int

    /// What to do with integers outside the range of `Int64`. Default ``LargeIntegerPolicy/reject``.
    public var largeIntegers: LargeIntegerPolicy

    /// Options with the given limits and policy.
    public init(maxDepth: Int = 64, maxInputBytes: Int = 1 << 20, largeIntegers: LargeIntegerPolicy = .reject) {
        self.maxDepth = maxDepth
        self.maxInputBytes = maxInputBytes
        self.largeIntegers = largeIntegers
    }

    /// ``maxDepth`` as enforced.
    var effectiveMaxDepth: Int { min(max(maxDepth, 0), Self.maxDepthCeiling) }

    /// ``maxInputBytes`` as enforced.
    var effectiveMaxInputBytes: Int { min(max(maxInputBytes, 0), Self.maxInputBytesCeiling) }
}
