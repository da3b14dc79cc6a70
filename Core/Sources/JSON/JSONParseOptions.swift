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

    /// What to do when an object repeats a key.
    public enum DuplicateKeyPolicy: Sendable, Hashable {
        /// Throw ``JSONParseError/Kind/duplicateKey`` at the second occurrence.
        /// Keys are compared after their escapes are decoded (`"\u0061"` repeats `"a"`).
        case reject
        /// Keep the first position and the last value (json-c's own rule).
        /// Text whose meaning depends on which copy wins is ambiguous: use
        /// this only for text the program wrote itself.
        case lastWins
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

    /// What to do when an object repeats a key. Default ``DuplicateKeyPolicy/reject``:
    /// `{"method":"agent.status","method":"agent.shutdown"}` means nothing safe.
    public var duplicateKeys: DuplicateKeyPolicy

    /// Options with the given limits and policies.
    public init(
        maxDepth: Int = 64, maxInputBytes: Int = 1 << 20, largeIntegers: LargeIntegerPolicy = .reject,
        duplicateKeys: DuplicateKeyPolicy = .reject
    ) {
        self.maxDepth = maxDepth
        self.maxInputBytes = maxInputBytes
        self.largeIntegers = largeIntegers
        self.duplicateKeys = duplicateKeys
    }

    /// ``maxDepth`` as enforced.
    var effectiveMaxDepth: Int { min(max(maxDepth, 0), Self.maxDepthCeiling) }

    /// ``maxInputBytes`` as enforced.
    var effectiveMaxInputBytes: Int { min(max(maxInputBytes, 0), Self.maxInputBytesCeiling) }
}
