import GATT
import SensorAggregator
import Testing

@Suite struct NotificationPolicyTests {
    typealias Value = NotificationPolicy.Value

    static func temperature(_ celsius: Double, urgent: Bool = false) -> Value {
        Value(bytes: (try? TemperatureValue(celsius: celsius).bytes) ?? [], number: celsius, urgent: urgent)
    }

    static func policy(queueLimit: Int = 2) -> NotificationPolicy {
        NotificationPolicy(
            rules: [.temperature: .init(delta: 0.5, interval: 10)], defaultRule: .init(delta: nil, interval: 30),
            queueLimit: queueLimit)
    }

    @Test func onlySubscribedCentralsAreNotified() {
        var policy = Self.policy()
        #expect(policy.update(characteristic: .temperature, value: Self.temperature(20), now: 0).isEmpty)
        // A new subscriber gets the current value at once.
        let first = policy.subscribe(central: "A", characteristic: .temperature, now: 1)
        #expect(first.map(\.central) == ["A"])
        #expect(first.first?.value == [0xD0, 0x07])
        #expect(policy.subscriptions(of: "A") == [.temperature])
        #expect(policy.update(characteristic: .humidity, value: Value(bytes: [1, 0]), now: 2).isEmpty)
    }

    @Test func aChangeBeyondTheDeltaGoesOutAtOnceASmallerOneWaitsForTheInterval() {
        var policy = Self.policy()
        _ = policy.update(characteristic: .temperature, value: Self.temperature(20), now: 0)
        _ = policy.subscribe(central: "A", characteristic: .temperature, now: 0)
        // 0.3 below the 0.5 delta: held back.
        #expect(policy.update(characteristic: .temperature, value: Self.temperature(20.3), now: 1).isEmpty)
        #expect(policy.nextDeadline == 10)
        #expect(policy.tick(now: 9.9).isEmpty)
        let periodic = policy.tick(now: 10)
        #expect(periodic.map(\.value) == [Self.temperature(20.3).bytes])
        // Unchanged values are not repeated at the interval.
        #expect(policy.nextDeadline == nil)
        #expect(policy.tick(now: 100).isEmpty)
        // 0.6 beyond the last sent value: at once.
        let jump = policy.update(characteristic: .temperature, value: Self.temperature(20.9), now: 101)
        #expect(jump.map(\.value) == [Self.temperature(20.9).bytes])
        // A threshold crossing is urgent whatever the delta.
        let alarm = policy.update(characteristic: .temperature, value: Self.temperature(21.0, urgent: true), now: 102)
        #expect(alarm.count == 1)
    }

    @Test func deltaIsMeasuredPerCentralFromWhatThatCentralLastGot() {
        var policy = Self.policy()
        _ = policy.update(characteristic: .temperature, value: Self.temperature(20), now: 0)
        _ = policy.subscribe(central: "A", characteristic: .temperature, now: 0)
        _ = policy.update(characteristic: .temperature, value: Self.temperature(20.4), now: 1)
        // B subscribes now and gets 20.4; A still last got 20.0.
        _ = policy.subscribe(central: "B", characteristic: .temperature, now: 2)
        let next = policy.update(characteristic: .temperature, value: Self.temperature(20.6), now: 3)
        #expect(next.map(\.central) == ["A"])
    }

    /// A slow central whose transmit queue is full never makes a queue grow:
    /// one pending entry per characteristic, at most `queueLimit`, latest
    /// value sent when it is ready.
    @Test func aSlowCentralGetsACoalescedBoundedQueue() {
        var policy = Self.policy(queueLimit: 2)
        let characteristics: [BluetoothUUID] = [.temperature, .humidity, .pressure]
        for characteristic in characteristics {
            _ = policy.update(characteristic: characteristic, value: Value(bytes: [0], number: 0), now: 0)
            _ = policy.subscribe(central: "slow", characteristic: characteristic, now: 0)
            _ = policy.subscribe(central: "fast", characteristic: characteristic, now: 0)
        }
        // The transport refuses the next one for "slow".
        let first = policy.update(characteristic: .temperature, value: Self.temperature(25), now: 1)
        #expect(first.count == 2)
        for notification in first where notification.central == "slow" { policy.refused(notification) }
        #expect(policy.isBlocked("slow"))
        // 1000 more temperature changes of 1 °C: "fast" gets each, "slow" keeps one entry.
        for step in 1...1000 {
            let sent = policy.update(
                characteristic: .temperature, value: Self.temperature(step % 2 == 0 ? 25 : 26), now: 1 + Double(step))
            #expect(sent.map(\.central) == ["fast"])
        }
        #expect(policy.queued(for: "slow") == [.temperature])
        // Interval-due work is not taken for a blocked central (so a caller
        // waiting for nextDeadline never spins on it).
        _ = policy.update(characteristic: .humidity, value: Value(bytes: [9], number: 9), now: 1002)
        #expect(policy.tick(now: 1100).map(\.central) == ["fast"])
        #expect(policy.nextDeadline == nil)
        #expect(policy.queued(for: "slow") == [.temperature])
        // Urgent humidity and pressure values queue too; past the limit of 2
        // the oldest entry (temperature) is dropped and counted.
        let urgent = [
            policy.update(characteristic: .humidity, value: Value(bytes: [1], number: 1, urgent: true), now: 1102),
            policy.update(characteristic: .pressure, value: Value(bytes: [2], number: 2, urgent: true), now: 1103),
        ]
        #expect(urgent.map { $0.map(\.central) } == [["fast"], ["fast"]])
        #expect(policy.queued(for: "slow") == [.humidity, .pressure])
        #expect(policy.dropped["slow"] == 1)
        // Ready: the latest values, oldest first, and the queue is empty.
        let drained = policy.transmitReady(central: "slow", now: 1101)
        #expect(drained.map(\.characteristic) == [.humidity, .pressure])
        #expect(drained.map(\.value) == [[1], [2]])
        #expect(policy.queued(for: "slow").isEmpty)
        #expect(!policy.isBlocked("slow"))
    }

    @Test func unsubscribeAndDisconnectForgetTheCentral() {
        var policy = Self.policy()
        _ = policy.update(characteristic: .temperature, value: Self.temperature(20), now: 0)
        _ = policy.subscribe(central: "A", characteristic: .temperature, now: 0)
        _ = policy.subscribe(central: "A", characteristic: .humidity, now: 0)
        policy.unsubscribe(central: "A", characteristic: .temperature)
        #expect(policy.subscriptions(of: "A") == [.humidity])
        #expect(policy.update(characteristic: .temperature, value: Self.temperature(30), now: 1).isEmpty)
        policy.disconnect(central: "A")
        #expect(policy.centrals.isEmpty)
        #expect(policy.nextDeadline == nil)
    }
}
