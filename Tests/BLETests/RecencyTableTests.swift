import BLE
import Testing

@Suite struct RecencyTableTests {
    let t0 = BLEInstant.zero

    @Test func keysKeepTheirNewestValueInTheOrderTheyWereLastTouched() {
        var table = RecencyTable<String, Int>()
        table.touch("a", 1, at: t0)
        table.touch("b", 2, at: t0 + .seconds(1))
        table.touch("a", 3, at: t0 + .seconds(2))
        #expect(table.entries.map(\.key) == ["b", "a"])
        #expect(table["a"] == 3 && table["b"] == 2 && table["c"] == nil)
        let renewed = table.renew("b", at: t0 + .seconds(3))
        let renewedAbsent = table.renew("c", at: t0 + .seconds(3))
        #expect(renewed && !renewedAbsent, "renewing inserts nothing")
        #expect(table.entries.map(\.key) == ["a", "b"] && table["b"] == 2, "renewed, its value kept")
        #expect(table.lastTouched("b") == t0 + .seconds(3))
        #expect(table.keys(untouchedFor: .seconds(1), at: t0 + .seconds(3)) == ["a"])
        let oldest = table.removeOldest()
        #expect(oldest == "a")
        #expect(table.count == 1 && table.oldest?.key == "b")
    }

    @Test func removingMostKeysCompactsTheNodesAndKeepsOrderAndValues() {
        var table = RecencyTable<Int, String>()
        for key in 0..<200 { table.touch(key, "\(key)", at: t0 + .milliseconds(key)) }
        for key in 0..<200 where key % 10 != 0 { table.remove(key) }
        #expect(table.entries.map(\.key) == Array(stride(from: 0, to: 200, by: 10)))
        #expect(table.entries.allSatisfy { $0.value == "\($0.key)" })
        #expect(table.lastTouched(190) == t0 + .milliseconds(190))
        var list = RecencyList<Int>()
        list.touch(1, at: t0)
        list.touch(2, at: t0)
        list.touch(1, at: t0)
        #expect(list.oldest?.key == 2 && list.count == 2)
    }
}
