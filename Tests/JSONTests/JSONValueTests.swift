import JSON
import Testing

@Suite("Values, objects, accessors and literals")
struct JSONValueTests {
    @Test("Object members keep the order of the text when parsed and serialised")
    func keyOrder() throws {
        let text = #"{"zeta":1,"alpha":2,"mid":{"y":1,"b":2,"x":3}}"#
        let value = try JSON(parsing: text)
        #expect(value.objectValue?.keys == ["zeta", "alpha", "mid"])
        #expect(value["mid"]?.objectValue?.keys == ["y", "b", "x"])
        #expect(value.serialized() == text)
    }

    @Test("Under .lastWins a repeated key keeps its first position and its last value (json-c's rule)")
    func duplicateKeys() throws {
        let value = try JSON(parsing: #"{"a":1,"b":2,"a":3}"#, options: JSONParseOptions(duplicateKeys: .lastWins))
        #expect(value.objectValue?.keys == ["a", "b"])
        #expect(value["a"] == 3)
        #expect(value.serialized() == #"{"a":3,"b":2}"#)
        let literal: JSON = ["a": 1, "b": 2, "a": 3]
        #expect(literal == value)
    }

    @Test("Literals build the same values as the cases")
    func literals() {
        let built: JSON = ["s": "x", "i": -3, "d": 2.5, "t": true, "n": .null, "l": [1, "two"], "o": [:], "e": []]
        let explicit = JSON.object(
            JSONObject([
                ("s", .string("x")), ("i", .int(-3)), ("d", .double(2.5)), ("t", .bool(true)), ("n", .null),
                ("l", .array([.int(1), .string("two")])), ("o", .object(JSONObject())), ("e", .array([])),
            ]))
        #expect(built == explicit)
    }

    @Test("Accessors return the payload only for the matching kind")
    func accessors() {
        let value: JSON = ["name": "x", "count": 3, "ratio": 0.5, "on": false, "list": [1, 2], "map": ["k": .null]]
        #expect(value["name"]?.stringValue == "x")
        #expect(value["count"]?.intValue == 3)
        #expect(value["ratio"]?.doubleValue == 0.5)
        #expect(value["on"]?.boolValue == false)
        #expect(value["list"]?.arrayValue == [1, 2])
        #expect(value["map"]?.objectValue == ["k": .null])
        #expect(value["map"]?["k"]?.isNull == true)
        #expect(value["list"]?[1] == 2)
        #expect(value["name"]?.intValue == nil)
        #expect(value["count"]?.stringValue == nil)
        #expect(value["ratio"]?.intValue == nil, "a double is not an integer, even 2.0")
        #expect(JSON.double(2.0).intValue == nil)
    }

    @Test("doubleValue accepts integers")
    func doubleFromInt() {
        #expect(JSON.int(7).doubleValue == 7.0)
        #expect(JSON.string("7").doubleValue == nil)
    }

    @Test("Missing keys, wrong kinds and out-of-range indices give nil, not a crash")
    func missing() {
        let value: JSON = ["list": [1]]
        #expect(value["nope"] == nil)
        #expect(value[0] == nil)
        #expect(value["list"]?[1] == nil)
        #expect(value["list"]?[-1] == nil)
        #expect(value["list"]?["key"] == nil)
        #expect(JSON.int(1)["key"] == nil)
    }

    @Test("Setting a key appends it, replacing keeps its place, nil removes it and later keys stay findable")
    func objectMutation() {
        var object: JSONObject = ["a": 1, "b": 2, "c": 3]
        object["d"] = 4
        object["b"] = 20
        #expect(object.keys == ["a", "b", "c", "d"])
        #expect(object["b"] == 20)
        object["a"] = nil
        #expect(object.keys == ["b", "c", "d"])
        #expect(object["c"] == 3)
        #expect(object["d"] == 4)
        #expect(object.removeValue(forKey: "c") == 3)
        #expect(object.removeValue(forKey: "c") == nil)
        #expect(object["d"] == 4)
        #expect(object.map(\.key) == ["b", "d"])
        #expect(object.count == 2)
        #expect(object.values == [20, 4])
    }

    @Test("An object growing past the indexed size and shrinking below it finds every key, in order")
    func objectAcrossIndexThreshold() {
        var object = JSONObject()
        for index in 0..<40 { object["k\(index)"] = .int(Int64(index)) }
        object["k3"] = 300
        for index in stride(from: 0, to: 40, by: 2) { object["k\(index)"] = nil }
        #expect(object.keys == stride(from: 1, to: 40, by: 2).map { "k\($0)" })
        #expect(object["k3"] == 300)
        #expect(object["k39"] == 39)
        #expect(object["k2"] == nil)
        while object.count > 3 { object.removeValue(forKey: object.keys[0]) }
        #expect(object.keys == ["k35", "k37", "k39"])
        object["k1"] = 1
        #expect(object["k37"] == 37 && object["k1"] == 1)
        let rebuilt = JSONObject(object.map { ($0.key, $0.value) })
        #expect(rebuilt == object)
    }

    @Test("Equality is structural and order-sensitive; equal values hash equally")
    func equality() {
        let ab: JSON = ["a": 1, "b": 2]
        let ba: JSON = ["b": 2, "a": 1]
        #expect(ab != ba)
        #expect(ab == ["a": 1, "b": 2])
        #expect(JSON.int(1) != JSON.double(1))
        #expect(Set([ab, ["a": 1, "b": 2], ba]).count == 2)
    }
}
