import GATT
import SimCore
import Testing

@Suite("Radio model and advertising schedule")
struct RadioAndAirTests {
    @Test("log-distance path loss: -59 dBm at 1 m, 20 dB less per decade with n = 2")
    func pathLoss() {
        var generator = SeededGenerator(seed: 1)
        let model = RadioModel(rssiAtOneMetre: -59, pathLossExponent: 2, noise: 0, path: .fixed(Position(x: 10, y: 0)))
        #expect(model.rssi(observer: .origin, at: .zero, using: &generator) == -79)
        #expect(model.rssi(observer: Position(x: 9, y: 0), at: .zero, using: &generator) == -59)
    }

    @Test("RSSI is clamped to the HCI range and never 0")
    func clamp() {
        var generator = SeededGenerator(seed: 1)
        let far = RadioModel(rssiAtOneMetre: -59, pathLossExponent: 4, path: .fixed(Position(x: 1e6, y: 0)))
        #expect(far.rssi(observer: .origin, at: .zero, using: &generator) == -127)
        let zero = RadioModel(rssiAtOneMetre: 0, pathLossExponent: 2, path: .fixed(Position(x: 1, y: 0)))
        #expect(zero.rssi(observer: .origin, at: .zero, using: &generator) == -1)
    }

    @Test("waypoints: linear between points, held at the ends, repeated with loop")
    func waypoints() {
        let points = [
            Waypoint(at: 0, position: Position(x: 1, y: 0)), Waypoint(at: 10, position: Position(x: 11, y: 0)),
        ]
        let once = RadioModel(path: .waypoints(points, loop: false))
        #expect(once.position(at: .seconds(5)) == Position(x: 6, y: 0))
        #expect(once.position(at: .seconds(20)) == Position(x: 11, y: 0))
        let looping = RadioModel(path: .waypoints(points, loop: true))
        #expect(looping.position(at: .seconds(12)) == Position(x: 3, y: 0))
    }

    @Test("noise is deterministic for a seed and has about the asked spread")
    func noise() {
        let model = RadioModel(noise: 4, path: .fixed(Position(x: 1, y: 0)))
        var a = SeededGenerator(seed: 42)
        var b = SeededGenerator(seed: 42)
        let first = (0..<500).map { _ in model.rssi(observer: .origin, at: .zero, using: &a) }
        let second = (0..<500).map { _ in model.rssi(observer: .origin, at: .zero, using: &b) }
        #expect(first == second)
        let mean = Double(first.map(Int.init).reduce(0, +)) / 500
        let variance = first.map { (Double($0) - mean) * (Double($0) - mean) }.reduce(0, +) / 500
        #expect(abs(mean + 59) < 1)
        #expect((3...5).contains(variance.squareRoot()))
    }

    @Test("each device advertises once per interval plus at most 10 ms of advDelay")
    func intervals() {
        var air = AirSchedule(intervalsMilliseconds: [100, 1000], start: .zero, seed: 7)
        var events: [(device: Int, time: SimInstant)] = []
        for step in 1...1000 { events += air.events(through: .milliseconds(Int64(step) * 10)) }
        let fast = events.filter { $0.device == 0 }.map(\.time.nanoseconds)
        let slow = events.filter { $0.device == 1 }
        #expect((91...100).contains(fast.count))
        #expect((9...10).contains(slow.count))
        for (a, b) in zip(fast, fast.dropFirst()) {
            #expect((100_000_000...110_000_000).contains(b - a))
        }
        #expect(events.map(\.time) == events.map(\.time).sorted())
    }

    @Test("events long in the past are skipped, not replayed")
    func skipsBacklog() {
        var air = AirSchedule(intervalsMilliseconds: [100], start: .zero, seed: 7)
        let r1 = air.events(through: .seconds(3600))
        #expect(r1.count <= 11)
    }
}
