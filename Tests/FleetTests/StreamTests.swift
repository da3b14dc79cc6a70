import JSON
import Testing

@testable import Fleet

@Suite("the fleet's bounded streams")
struct StreamTests {
    @Test("the event queue drops the oldest when full and counts it")
    func eventQueue() {
        var queue = EventQueue(limit: 3)
        for index in 0..<5 { queue.push(EventQueue.Message(topic: "t\(index)", payload: [])) }
        #expect(queue.dropped == 2)
        #expect(queue.count == 3)
        #expect(queue.pop()?.topic == "t2")
        #expect(queue.pop()?.topic == "t3")
        #expect(queue.pop()?.topic == "t4")
        #expect(queue.pop() == nil)
    }

    @Test("discoveries fold into one summary per interval, at most 256 devices, the rest counted")
    func discoverySummary() {
        var summary = DiscoverySummary()
        #expect(summary.isEmpty)
        for index in 0..<300 { summary.add(["id": .string("d\(index)"), "name": .null, "rssi": -50]) }
        for _ in 0..<10 { summary.add(["id": "d0", "name": "zero", "rssi": -40]) }
        let json = summary.take(intervalSeconds: 10)
        #expect(json["reports"] == 310)
        #expect(json["devices"]?.arrayValue?.count == 256)
        #expect(json["untracked"] == 44)
        #expect(json["devices"]?[0]?["reports"] == 11)
        #expect(json["devices"]?[0]?["name"] == "zero")
        #expect(summary.isEmpty)
    }

    @Test("readings coalesce per sensor: the newest waits, the replaced ones are counted")
    func readings() {
        var feed = ReadingFeed()
        for value in 0..<100 {
            feed.add(ReadingFeed.Reading(sensor: "a", value: Double(value), time: 0))
            feed.add(ReadingFeed.Reading(sensor: "b", value: Double(value), time: 0))
        }
        #expect(feed.count == 2)
        #expect(feed.merged == 198)
        #expect(feed.pop()?.value == 99)
        #expect(feed.pop()?.sensor == "b")
        #expect(feed.pop() == nil)
    }

    @Test("reconnection delays double up to the ceiling, with jitter, and start again after a success")
    func backoff() {
        var backoff = Backoff()
        var random = SystemRandomNumberGenerator()
        let delays = (0..<10).map { _ in backoff.next(using: &random) }
        #expect(delays[0] >= .seconds(1) && delays[0] <= .milliseconds(1250))
        #expect(delays[3] >= .seconds(8) && delays[3] <= .seconds(10))
        #expect(delays[9] >= .seconds(60) && delays[9] <= .seconds(75))
        backoff.reset()
        #expect(backoff.next(using: &random) <= .milliseconds(1250))
    }
}
