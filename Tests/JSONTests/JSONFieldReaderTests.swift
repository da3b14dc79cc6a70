import JSON
import Testing

@Suite("field reader: every problem, with its path")
struct JSONFieldReaderTests {
    @Test("a document is read to its end: each problem recorded, defaults kept, nested paths named")
    func collectsEverything() throws {
        let json = try JSON(
            parsing: #"{"a": "x", "b": 99, "nested": {"flag": 1, "list": [1]}, "extra": true, "kind": "blue"}"#)
        enum Kind: String, CaseIterable { case red, green }
        let report = JSONFieldReport()
        let root = try #require(JSONFieldReader(json, report: report))
        root.allowOnly(["a", "b", "nested", "kind", "missing"])
        #expect(root.integer("a", in: 0...10) == nil)
        #expect(root.number("b", in: 0...10) == nil)
        let kind: Kind? = root.choice("kind")
        #expect(kind == nil)
        #expect(root.string("missing", required: true) == nil)
        let nested = try #require(root.object("nested"))
        #expect(nested.bool("flag") == nil)
        #expect(nested.array("list", count: 2...3) == nil)
        #expect(
            report.errors.map(\.description) == [
                "extra: unknown field",
                #"a: expected an integer from 0 to 10, found the string "x""#,
                "b: expected a number from 0 to 10, found the integer 99",
                #"kind: expected one of "red", "green", found the string "blue""#,
                "missing: missing required field",
                "nested.flag: expected true or false, found the integer 1",
                "nested.list: expected 2 to 3 elements, found 1",
            ])
        #expect(throws: JSONFieldErrors.self) { try report.check() }
    }

    @Test("a value that is not an object is one problem at its path")
    func notAnObject() {
        let report = JSONFieldReport()
        #expect(JSONFieldReader([1], path: "sensors[0]", report: report) == nil)
        #expect(report.errors == [JSONFieldError(path: "sensors[0]", "expected an object, found an array")])
    }
}
