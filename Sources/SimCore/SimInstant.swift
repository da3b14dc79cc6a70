/// A point on the simulation's own time line, in nanoseconds since the simulation started.
///
/// SimCore never reads a clock: the shell (the `blesim` executable, or a test) says what time
/// it is, so every behaviour is reproducible.
public struct SimInstant: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Nanoseconds since the start of the simulation.
    public var nanoseconds: Int64

    /// The start of the simulation.
    public static let zero = SimInstant(nanoseconds: 0)

    /// An instant `nanoseconds` after the start of the simulation.
    public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    /// An instant `seconds` after the start of the simulation.
    public static func seconds(_ seconds: Double) -> SimInstant {
        SimInstant(nanoseconds: Int64((seconds * 1e9).rounded()))
    }

    /// An instant `milliseconds` after the start of the simulation.
    public static func milliseconds(_ milliseconds: Int64) -> SimInstant {
        SimInstant(nanoseconds: milliseconds * 1_000_000)
    }

    /// Seconds since the start of the simulation.
    public var seconds: Double { Double(nanoseconds) / 1e9 }

    /// This instant moved by `nanoseconds` (negative moves back).
    public func advanced(byNanoseconds nanoseconds: Int64) -> SimInstant {
        SimInstant(nanoseconds: self.nanoseconds &+ nanoseconds)
    }

    /// This instant moved by `seconds`.
    public func advanced(bySeconds seconds: Double) -> SimInstant {
        advanced(byNanoseconds: Int64((seconds * 1e9).rounded()))
    }

    public static func < (lhs: SimInstant, rhs: SimInstant) -> Bool { lhs.nanoseconds < rhs.nanoseconds }

    public var description: String { "t+\(seconds)s" }
}
