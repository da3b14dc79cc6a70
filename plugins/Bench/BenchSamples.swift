import Glibc

/// What the bench sends in each notification and write: a sequence number and
/// the sender's CLOCK_MONOTONIC time (nanoseconds), both little-endian UInt64,
/// so the receiver (another process on the same machine) measures the latency.
enum BenchValue {
    /// The bench service and its two characteristics.
    static let service = "6e6b0001-b1e0-4c8e-9a57-0b2f6c5b0e01"
    static let notifyCharacteristic = "6e6b0002-b1e0-4c8e-9a57-0b2f6c5b0e01"
    static let writeCharacteristic = "6e6b0003-b1e0-4c8e-9a57-0b2f6c5b0e01"
    /// The peripheral's advertised name.
    static let localName = "bench-peripheral"

    /// CLOCK_MONOTONIC now, in nanoseconds (the clock Python's time.monotonic_ns reads).
    static func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    /// The 16 bytes for sample `sequence`, stamped now.
    static func encode(_ sequence: UInt64) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 16)
        let stamp = now()
        for index in 0..<8 {
            bytes[index] = UInt8(truncatingIfNeeded: sequence >> (8 * index))
            bytes[8 + index] = UInt8(truncatingIfNeeded: stamp >> (8 * index))
        }
        return bytes
    }

    /// The send time in `value`, nil when it is not a bench value.
    static func stamp(of value: [UInt8]) -> UInt64? {
        guard value.count >= 16 else { return nil }
        return (0..<8).reduce(UInt64(0)) { $0 | UInt64(value[8 + $1]) << (8 * $1) }
    }
}

/// Received samples between two `take()`s: the count and each one's latency.
/// Bounded: past `limit` latencies only the count grows (counted in `unsampled`).
struct LatencyWindow: Sendable {
    private(set) var count = 0
    private(set) var unsampled = 0
    private var latencies: [UInt64] = []
    static let limit = 2_000_000

    /// One received value, stamped by its sender.
    mutating func record(_ value: [UInt8]) {
        count += 1
        guard let stamp = BenchValue.stamp(of: value) else { return }
        guard latencies.count < Self.limit else {
            unsampled += 1
            return
        }
        let now = BenchValue.now()
        latencies.append(now > stamp ? now - stamp : 0)
    }

    /// The window's figures (microseconds), and a fresh window.
    mutating func take() -> (count: Int, p50: Double?, p99: Double?, max: Double?, unsampled: Int) {
        defer { self = LatencyWindow() }
        let sorted = latencies.sorted()
        func percentile(_ share: Double) -> Double? {
            guard !sorted.isEmpty else { return nil }
            return Double(sorted[min(sorted.count - 1, Int(share * Double(sorted.count)))]) / 1000
        }
        return (count, percentile(0.5), percentile(0.99), sorted.last.map { Double($0) / 1000 }, unsampled)
    }
}
