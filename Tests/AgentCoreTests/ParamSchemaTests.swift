import AgentCore
import ControlProtocol
import GATT
import JSON
import RoleKit
import Synchronization
import Testing

/// The one params mechanism: schemas, their messages and paths, and the
/// registry refusing a call before its handler runs.
@Suite("param schemas")
struct ParamSchemaTests {
    static let scan = ParamSchema.object(
        .optional("services", .array(of: .uuid, count: 0...4)), .optional("allowDuplicates", .boolean),
        .optional("rssiThreshold", .integer(-127...20)), .optional("ratio", .number(0...1)),
        .optional("mode", .oneOf(["fast", "slow"])), .optional("value", .hex(maxBytes: 2)),
        .optional("text", .string(maxBytes: 4)), .required("id", .string(maxBytes: 36)))

    /// Every problem of `params` under `schema`, as "path: message".
    static func problems(_ params: JSON?, _ schema: ParamSchema = scan) -> [String] {
        do {
            _ = try schema.validate(params)
            return []
        } catch {
            return error.errors.map(\.description)
        }
    }

    @Test("each type says what it expected and what it found, at the field's path")
    func typeMessages() {
        #expect(Self.problems(["id": "a"]) == [])
        #expect(
            Self.problems(["id": "a", "allowDuplicates": 0]) == [
                "allowDuplicates: expected true or false, found the integer 0"
            ])
        #expect(
            Self.problems(["id": "a", "allowDuplicates": "false"])
                == [#"allowDuplicates: expected true or false, found the string "false""#])
        #expect(
            Self.problems(["id": "a", "rssiThreshold": -500])
                == ["rssiThreshold: expected an integer from -127 to 20, found the integer -500"])
        #expect(
            Self.problems(["id": "a", "rssiThreshold": 2.5])
                == ["rssiThreshold: expected an integer from -127 to 20, found the number 2.5"])
        #expect(
            Self.problems(["id": "a", "ratio": 2]) == ["ratio: expected a number from 0 to 1, found the integer 2"])
        #expect(
            Self.problems(["id": "a", "mode": "warp"]) == [
                #"mode: expected one of "fast", "slow", found the string "warp""#
            ])
        #expect(
            Self.problems(["id": "a", "value": "abc"])
                == [#"value: expected hex digits in pairs (at most 2 bytes), found the string "abc""#])
        #expect(
            Self.problems(["id": "a", "text": "toolong"])
                == [#"text: expected a non-empty string of at most 4 bytes, found the string "toolong""#])
        #expect(
            Self.problems(["id": "a", "services": ["180d", "nope", 7]]) == [
                #"services[1]: expected a Bluetooth UUID such as "2a37" or "0000180d-0000-1000-8000-00805f9b34fb", found the string "nope""#,
                #"services[2]: expected a Bluetooth UUID such as "2a37" or "0000180d-0000-1000-8000-00805f9b34fb", found the integer 7"#,
            ])
        #expect(
            Self.problems(["id": "a", "services": ["180d", "180d", "180d", "180d", "180d"]])
                == ["services: expected 0 to 4 elements, found 5"])
    }

    @Test("missing, unknown and positional params; every problem is reported")
    func shape() {
        #expect(Self.problems(nil) == ["id: missing required param"])
        #expect(
            Self.problems(["id": "a", "colour": 1, "size": 2]) == ["colour: unknown param", "size: unknown param"])
        #expect(Self.problems([1, 2]) == ["expected an object of named params, found an array"])
        #expect(Self.problems([], .object(.optional("x", .boolean))) == [])
        #expect(Self.problems(["x": 1], .none) == ["x: unknown param (this method takes none)"])
        #expect(Self.problems([1], .none) == ["this method takes no params, found an array"])
        #expect(Self.problems(nil, .none) == [] && Self.problems([:], .none) == [] && Self.problems([], .none) == [])
        #expect(Self.problems(["anything": [1, ["x": .null]]], .any) == [])
    }

    @Test("rules across params run once the fields are fine")
    func rules() {
        let write = ParamSchema.object(
            [.optional("value", .hex(maxBytes: 4)), .optional("text", .string(maxBytes: 4))],
            rules: [.exactlyOne(of: "value", "text")])
        #expect(Self.problems(["value": "00"], write) == [])
        #expect(
            Self.problems(["value": "00", "text": "x"], write) == [
                #"value: give only one of "value" or "text", not both"#
            ])
        #expect(Self.problems([:], write) == [#"value: give one of "value" or "text""#])
        #expect(
            Self.problems(["value": "0"], write) == [
                #"value: expected hex digits in pairs (at most 4 bytes), found the string "0""#
            ])
        let either = ParamSchema.object(
            [.optional("a", .boolean), .optional("b", .boolean)], rules: [.atMostOne(of: "a", "b")])
        #expect(Self.problems(["b": true, "a": true], either) == [#"a: give at most one of "a", "b""#])
    }

    @Test("accepted params read typed")
    func values() throws {
        let values = try Self.scan.validate([
            "id": "x", "services": ["180d"], "allowDuplicates": true, "rssiThreshold": -70, "value": "0aFF",
        ])
        #expect(values.string("id") == "x")
        #expect(values.uuids("services") == [BluetoothUUID("180d")].compactMap { $0 })
        #expect(values.bool("allowDuplicates") == true)
        #expect(values.int("rssiThreshold") == -70)
        #expect(values.bytes("value") == [0x0A, 0xFF])
        #expect(values.double("ratio") == nil && !values.contains("ratio"))
    }

    @Test("the registry answers -32602 with every problem in data.errors, and the handler never runs")
    func registryRefusesBeforeTheHandler() async throws {
        let registry = MethodRegistry()
        let calls = Mutex(0)
        try registry.registerBuiltin("test.scan", params: Self.scan) { call in
            calls.withLock { $0 += 1 }
            return .int(call.arguments.int("rssiThreshold") ?? 0)
        }
        let error = await #expect(throws: RPCError.self) {
            try await callMethod(registry, "test.scan", ["rssiThreshold": "strong", "colour": 1])
        }
        #expect(error?.code == .invalidParams)
        #expect(error?.message == "colour: unknown param (and 2 more in data.errors)")
        #expect(
            error?.data?["errors"]?.arrayValue?.compactMap { $0["path"]?.stringValue } == [
                "colour", "rssiThreshold", "id",
            ])
        #expect(calls.withLock { $0 } == 0)
        #expect(try await callMethod(registry, "test.scan", ["id": "a", "rssiThreshold": -3]) == -3)
        #expect(calls.withLock { $0 } == 1)
    }

    @Test(
        "an immediate method is checked and answered at once, and as any method through call; other methods are not immediate"
    )
    func immediateMethods() async throws {
        let registry = MethodRegistry()
        try registry.registerImmediate("test.now", params: Self.scan) { call in
            .int(call.arguments.int("rssiThreshold") ?? 0)
        }
        try registry.registerBuiltin("test.later", params: .none) { _ in true }
        let peer = PeerIdentity(client: 1, pid: 1, uid: 0)
        let good = MethodCall(method: "test.now", params: ["id": "a", "rssiThreshold": -3], peer: peer)
        #expect(try registry.callImmediately(good)?.get() == -3)
        #expect(await registry.call(good) == .success(-3))
        let bad = MethodCall(method: "test.now", params: ["colour": 1], peer: peer)
        guard case .failure(let error)? = registry.callImmediately(bad) else {
            Issue.record("params the schema refuses are answered with an error")
            return
        }
        #expect(error.code == .invalidParams)
        #expect(registry.callImmediately(MethodCall(method: "test.later", params: nil, peer: peer)) == nil)
        #expect(registry.callImmediately(MethodCall(method: "test.none", params: nil, peer: peer)) == nil)
        #expect(throws: RegistrationError.duplicate("test.now")) {
            try registry.registerImmediate("test.now", params: .none) { _ in true }
        }
    }
}
