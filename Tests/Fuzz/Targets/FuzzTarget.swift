/// A broken invariant a target found in an input that did not crash: a value
/// that does not survive its own encoder, a parser that disagrees with its
/// reference model. Under libFuzzer a finding aborts, so it is reported and
/// saved like a crash.
public struct FuzzFinding: Error, Sendable, CustomStringConvertible {
    /// What was broken, with the values involved.
    public let description: String

    /// A finding described by `description`.
    public init(_ description: String) { self.description = description }
}

/// One fuzz target: a parser of input from outside the agent and the checks
/// every input must pass.
///
/// ``run(_:)`` must return for every byte string: a rejected input is a
/// thrown error of the parser's own, caught inside the target. A trap
/// (overflow, index out of range, force unwrap) is a crash libFuzzer reports;
/// a broken invariant is a ``FuzzFinding``.
public struct FuzzTarget: Sendable {
    /// The name `blefuzz` and `scripts/fuzz.sh` know it by; also the corpus
    /// directory's name (Tests/Fuzz/Corpus/<name>).
    public let name: String
    /// What the target reads, in one line.
    public let summary: String
    /// Inputs built from the tests' fixtures; the checked-in corpus starts from them.
    public let seeds: @Sendable () -> [[UInt8]]
    /// Fixture files (relative to the repository) that are seeds as they are.
    public let seedFiles: [String]
    private let body: @Sendable ([UInt8]) throws(FuzzFinding) -> Void

    /// A target named `name` running `body` on each input.
    public init(
        name: String, summary: String, seeds: @escaping @Sendable () -> [[UInt8]], seedFiles: [String] = [],
        body: @escaping @Sendable ([UInt8]) throws(FuzzFinding) -> Void
    ) {
        self.name = name
        self.summary = summary
        self.seeds = seeds
        self.seedFiles = seedFiles
        self.body = body
    }

    /// Runs one input through the target.
    public func run(_ input: [UInt8]) throws(FuzzFinding) { try body(input) }
}

/// Throws a ``FuzzFinding`` unless `condition` holds.
func require(_ condition: Bool, _ message: @autoclosure () -> String) throws(FuzzFinding) {
    if !condition { throw FuzzFinding(message()) }
}

/// A small deterministic generator seeded from the input itself, for choices
/// a target makes about how to present the input (chunk sizes, options) that
/// must replay identically from the saved input.
struct InputDerivedGenerator {
    private var state: UInt64

    /// A generator seeded with the FNV-1a hash of `bytes`.
    init(_ bytes: [UInt8]) {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        state = hash
    }

    /// The next value in `0..<bound` (`bound` > 0).
    mutating func next(below bound: Int) -> Int {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Int((state >> 33) % UInt64(bound))
    }
}

extension String {
    /// The UTF-8 bytes, for seeds written as text.
    var bytes: [UInt8] { Array(utf8) }
}
