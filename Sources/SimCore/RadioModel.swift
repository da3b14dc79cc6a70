/// How strongly a device is heard: log-distance path loss with Gaussian noise, over a path.
///
/// RSSI(d) = `rssiAtOneMetre` - 10 · `pathLossExponent` · log10(d) + N(0, `noise`), with d the
/// distance from the observing adapter at that moment (never below 0.1 m), rounded and clamped
/// to the HCI range -127...20 dBm (0, which BlueZ reads as "no RSSI", becomes -1).
public struct RadioModel: Sendable, Equatable {
    /// The RSSI heard at one metre, dBm (the "measured power" of beacons; typically -59).
    public var rssiAtOneMetre: Double
    /// Path-loss exponent n: 2 in free space, 2.7 to 4 indoors.
    public var pathLossExponent: Double
    /// Standard deviation of the noise added to every reading, dB.
    public var noise: Double
    /// Where the device is: a fixed point, or a path of waypoints over time.
    public var path: Path

    /// A model from its parts.
    public init(
        rssiAtOneMetre: Double = -59, pathLossExponent: Double = 2, noise: Double = 0,
        path: Path = .fixed(Position(x: 1, y: 0))
    ) {
        self.rssiAtOneMetre = rssiAtOneMetre
        self.pathLossExponent = pathLossExponent
        self.noise = noise
        self.path = path
    }

    /// Where a device is over time.
    public enum Path: Sendable, Equatable {
        /// It stays at one point.
        case fixed(Position)
        /// It moves in straight lines between waypoints (sorted by time), staying at the first
        /// before it and at the last after it; with `loop`, the path repeats from the first
        /// waypoint once the last is reached.
        case waypoints([Waypoint], loop: Bool)
    }

    /// Where a device is at `instant`.
    public func position(at instant: SimInstant) -> Position {
        switch path {
        case .fixed(let position):
            return position
        case .waypoints(let points, let loop):
            return Self.interpolate(points, at: instant.seconds, loop: loop)
        }
    }

    /// The noiseless RSSI an observer at `observer` reads at `instant`, before rounding.
    public func meanRSSI(observer: Position, at instant: SimInstant) -> Double {
        let distance = max(0.1, position(at: instant).distance(to: observer))
        return rssiAtOneMetre - 10 * pathLossExponent * _log10(distance)
    }

    /// One RSSI reading at `observer` and `instant`, with noise drawn from `generator`.
    public func rssi(
        observer: Position, at instant: SimInstant, using generator: inout SeededGenerator
    ) -> Int16 {
        let value = meanRSSI(observer: observer, at: instant) + generator.gaussian(standardDeviation: noise)
        let clamped = Int16(min(20, max(-127, value.rounded())))
        return clamped == 0 ? -1 : clamped
    }

    private static func interpolate(_ points: [Waypoint], at seconds: Double, loop: Bool) -> Position {
        guard let first = points.first, let last = points.last else { return .origin }
        var t = seconds
        if loop, last.at > first.at, t > last.at {
            let span = last.at - first.at
            t = first.at + (t - first.at).truncatingRemainder(dividingBy: span)
        }
        if t <= first.at { return first.position }
        if t >= last.at { return last.position }
        for (a, b) in zip(points, points.dropFirst()) where t <= b.at {
            let span = b.at - a.at
            guard span > 0 else { return b.position }
            let f = (t - a.at) / span
            return Position(
                x: a.position.x + (b.position.x - a.position.x) * f,
                y: a.position.y + (b.position.y - a.position.y) * f)
        }
        return last.position
    }
}

/// A point a moving device passes at a given time.
public struct Waypoint: Sendable, Equatable {
    /// Seconds since the simulation started.
    public var at: Double
    /// Where the device is then.
    public var position: Position

    /// A waypoint.
    public init(at: Double, position: Position) {
        self.at = at
        self.position = position
    }
}
