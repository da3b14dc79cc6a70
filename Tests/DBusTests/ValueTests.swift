import DBus
import Testing

@Suite("Signatures, paths and values (no bus)")
struct ValueTests {
    @Test(
        "valid signatures parse into their types", arguments: ["", "s", "a{sv}", "a{oa{sa{sv}}}", "(ii)as", "aay", "h"])
    func validSignatures(text: String) throws {
        let signature = try DBusSignature(text)
        #expect(try DBusSignature(signature.types).rawValue == text)
    }

    @Test(
        "invalid signatures are refused with a reason",
        arguments: [
            "a", "(", "()", "a{vs}", "{sv}", "a{s}", "a{sss}", "z", "(i", String(repeating: "a", count: 33) + "i",
            String(repeating: "(", count: 33) + "i" + String(repeating: ")", count: 33),
            String(repeating: "i", count: 256),
        ])
    func invalidSignatures(text: String) {
        #expect(throws: DBusMarshalError.self) { try DBusSignature(text) }
    }

    @Test(
        "object paths are validated",
        arguments: [
            ("/", true), ("/a/b_1/C", true), ("", false), ("a", false),
            ("/a/", false), ("//", false), ("/a//b", false), ("/a-b", false), ("/ä", false),
        ])
    func objectPaths(text: String, valid: Bool) {
        #expect(ObjectPath.isValid(text) == valid)
        #expect(((try? ObjectPath(text)) != nil) == valid)
    }

    @Test("object path helpers: parent, ancestry, appending")
    func pathHelpers() throws {
        let path = try ObjectPath("/org/bluez/hci0")
        #expect(path.parent == (try ObjectPath("/org/bluez")))
        #expect(ObjectPath.root.parent == nil)
        #expect(try ObjectPath("/org").isStrictAncestor(of: path))
        #expect(!(try ObjectPath("/or").isAncestor(orSelfOf: path)))
        #expect(try path.appending("dev_00_11") == ObjectPath("/org/bluez/hci0/dev_00_11"))
        #expect(throws: DBusMarshalError.self) { try path.appending("dev:00") }
    }

    @Test("values know their signature, also for empty containers")
    func signatures() {
        #expect(DBusValue.array(.string, []).signature == "as")
        #expect(DBusValue.dictionary(key: .string, value: .variant, []).signature == "a{sv}")
        #expect(DBusValue.structure([.int32(1), .bytes([])]).signature == "(iay)")
        #expect(DBusValue.variant(.string("x")).signature == "v")
        #expect(DBusValue.bytes([1]) == .array(.byte, [.byte(1)]))
    }

    @Test("Swift values convert both ways; wrong shapes throw typeMismatch")
    func representable() throws {
        let properties: [String: DBusValue] = ["Name": "x", "RSSI": .int16(-3)]
        let value = DBusValue(properties)
        #expect(value.signature == "a{sv}")
        #expect(try value.decode([String: DBusValue].self) == properties)
        #expect(try DBusValue(["a", "b"]).decode([String].self) == ["a", "b"])
        #expect(DBusValue([UInt8]([1, 2])) == .bytes([1, 2]))
        #expect(try DBusValue.variant(.uint32(3)).decode(UInt32.self) == 3)
        #expect(throws: DBusMarshalError.typeMismatch(expected: "s", actual: "i")) {
            try DBusValue.int32(1).decode(String.self)
        }
        #expect(throws: DBusMarshalError.self) { try DBusValue.array(.int32, []).decode([String].self) }
        let (a, b) = try DBusValue.structure([.int32(1), "b"]).decodeFields(Int32.self, String.self)
        #expect(a == 1 && b == "b")
        #expect(value["RSSI"] == .int16(-3))
    }

    @Test("match rules render in the bus syntax with apostrophes escaped")
    func matchRuleText() throws {
        let rule = MatchRule(
            sender: "org.bluez", interface: "org.freedesktop.DBus.Properties", path: try ObjectPath("/org/bluez"),
            arguments: [0: "it's"])
        #expect(
            rule.ruleString
                == "type='signal',sender='org.bluez',interface='org.freedesktop.DBus.Properties',path='/org/bluez',"
                + "arg0='it'\\''s'")
    }

    @Test("messages with bad names or bad values are refused before reaching libdbus")
    func refusedMessages() {
        #expect(throws: DBusMarshalError.self) {
            try DBusMessage.methodCall(destination: "not a name", path: .root, interface: nil, member: "M")
        }
        #expect(throws: DBusMarshalError.self) {
            try DBusMessage.methodCall(destination: nil, path: .root, interface: "noDots", member: "M")
        }
        #expect(throws: DBusMarshalError.stringContainsNUL) {
            try DBusMessage.signal(path: .root, interface: "a.b", member: "S", arguments: ["a\0b"])
        }
        #expect(throws: DBusMarshalError.typeMismatch(expected: "s", actual: "i")) {
            try DBusMessage.signal(
                path: .root, interface: "a.b", member: "S", arguments: [.array(.string, [.int32(1)])])
        }
        #expect(throws: DBusMarshalError.self) {
            try DBusMessage.signal(path: .root, interface: "a.b", member: "S", arguments: [.structure([])])
        }
        var deep = DBusValue.int32(1)
        for _ in 0..<70 { deep = .variant(deep) }
        #expect(throws: DBusMarshalError.nestingTooDeep) {
            try DBusMessage.signal(path: .root, interface: "a.b", member: "S", arguments: [deep])
        }
        let fd = UnixFD(owning: -1)
        #expect(throws: DBusMarshalError.closedFileDescriptor) {
            try DBusMessage.signal(path: .root, interface: "a.b", member: "S", arguments: [.unixFD(fd)])
        }
    }
}
