import BLETesting
import DBus
import Testing

/// The connection's own reader of messages in wire form, against libdbus's reader on the same bytes: libdbus
/// validates a message in full before it is read, so whatever it accepts must read the same here, value by value
/// and through the body cursor; what it rejects for its header is rejected here too; a malformed body is an error
/// (or a nil read) where it is read, never a crash.
@Suite("D-Bus messages read from their wire form")
struct WireReaderTests {
    // MARK: Agreement with libdbus

    @Test("every value type reads as libdbus reads it, both as values and through the body cursor")
    func valuesAgree() throws {
        for value in RoundTripTests.samples where !BodyRendering.containsUnixFD(value) {
            let bytes = try DBusMessage.signal(
                path: .root, interface: "org.bleagent.Wire", member: "Sample",
                arguments: [.string("before"), value, .uint32(7)]
            ).wireBytes()
            let ours = try DBusMessage(wireBytes: bytes)
            let theirs = try DBusMessage(libdbusWireBytes: bytes)
            try expectSameHeaders(ours, theirs)
            let reference = try theirs.arguments()
            #expect(try ours.arguments() == reference, "\(value)")
            #expect(
                ours.withBodyReader { BodyRendering.render($0) }
                    == reference.map(BodyRendering.render).joined(separator: " "), "\(value)")
        }
    }

    @Test("calls, returns, errors and flags carry the same header as libdbus reads")
    func headersAgree() throws {
        let call = try DBusMessage.methodCall(
            destination: "org.bluez", path: try ObjectPath("/org/bluez/hci0"), interface: "org.bluez.Adapter1",
            member: "StartDiscovery", noReplyExpected: true)
        let bytes = try call.wireBytes(serial: 41)
        let ours = try DBusMessage(wireBytes: bytes)
        try expectSameHeaders(ours, try DBusMessage(libdbusWireBytes: bytes))
        #expect(ours.kind == .methodCall && ours.serial == 41 && ours.noReplyExpected)

        let reply = WireWriter.message(
            type: 3, serial: 9,
            fields: [.replySerial(41), .errorName("org.bluez.Error.Failed"), .destination(":1.7"), .sender(":1.2")],
            signature: "s", body: { $0.string("Operation failed") })
        let error = try DBusMessage(wireBytes: reply)
        try expectSameHeaders(error, try DBusMessage(libdbusWireBytes: reply))
        #expect(error.kind == .error && error.replySerial == 41)
        #expect(error.error == DBusError(DBusError.Name(rawValue: "org.bluez.Error.Failed"), "Operation failed"))
    }

    @Test("a big-endian message reads as libdbus reads it")
    func bigEndian() throws {
        let bytes = WireWriter.message(
            bigEndian: true, type: 4, serial: 3,
            fields: [
                .path("/org/bluez/hci0/dev_AA"), .interface("org.freedesktop.DBus.Properties"),
                .member("PropertiesChanged"),
            ],
            signature: "sa{sv}asx",
            body: { body in
                body.string("org.bluez.Device1")
                body.array(alignment: 8) { entries in
                    entries.align(8)
                    entries.string("RSSI")
                    entries.signature("n")
                    entries.uint16(0xFFD8)
                    entries.align(8)
                    entries.string("Paired")
                    entries.signature("b")
                    entries.uint32(1)
                }
                body.array(alignment: 4) { $0.string("Alias") }
                body.uint64(0x0102_0304_0506_0708)
            })
        let ours = try DBusMessage(wireBytes: bytes)
        let theirs = try DBusMessage(libdbusWireBytes: bytes)
        try expectSameHeaders(ours, theirs)
        let arguments = try ours.arguments()
        #expect(arguments == (try theirs.arguments()))
        #expect(arguments[1].dictionaryEntries?.first?.value == .variant(.int16(-40)))
        #expect(arguments[3] == .int64(0x0102_0304_0506_0708))
        #expect(
            ours.withBodyReader { BodyRendering.render($0) }
                == arguments.map(BodyRendering.render).joined(separator: " "))
    }

    // MARK: Headers that are not D-Bus

    @Test(
        "a header libdbus rejects is rejected: truncation, byte order, version, serial, type, missing or doubled fields, the local path and interface"
    )
    func badHeaders() throws {
        let good = try DBusMessage.signal(
            path: .root, interface: "org.bleagent.Wire", member: "Good", arguments: [.string("x")]
        ).wireBytes()
        var cases: [(String, [UInt8])] = [
            ("truncated", Array(good.dropLast())),
            ("empty", []),
            ("byte order", [UInt8(ascii: "x")] + good.dropFirst()),
            ("version 2", patched(good, at: 3, 2)),
            ("serial 0", patched(good, at: 8, 0)),
            ("type 0", patched(good, at: 1, 0)),
        ]
        let signal = { (fields: [WireWriter.Field]) in
            WireWriter.message(type: 4, serial: 1, fields: fields, signature: "", body: { _ in })
        }
        cases.append(("a signal without a member", signal([.path("/a"), .interface("a.b")])))
        cases.append(("a signal without an interface", signal([.path("/a"), .member("M")])))
        cases.append(("a field twice", signal([.path("/a"), .interface("a.b"), .member("M"), .member("N")])))
        cases.append(("an invalid path", signal([.path("/a//b"), .interface("a.b"), .member("M")])))
        cases.append(("an invalid interface", signal([.path("/a"), .interface("ab"), .member("M")])))
        cases.append(("an invalid member", signal([.path("/a"), .interface("a.b"), .member("1M")])))
        cases.append(("an invalid sender", signal([.path("/a"), .interface("a.b"), .member("M"), .sender("a..b")])))
        cases.append(
            (
                "the local interface",
                signal([.path("/a"), .interface("org.freedesktop.DBus.Local"), .member("Disconnected")])
            ))
        cases.append(
            ("the local path", signal([.path("/org/freedesktop/DBus/Local"), .interface("a.b"), .member("M")])))
        cases.append(
            (
                "a body without a signature",
                WireWriter.message(
                    type: 4, serial: 1, fields: [.path("/a"), .interface("a.b"), .member("M")], signature: nil,
                    body: { $0.uint32(1) })
            ))
        cases.append(
            (
                "an invalid body signature",
                WireWriter.message(
                    type: 4, serial: 1, fields: [.path("/a"), .interface("a.b"), .member("M")], signature: "a{vs}",
                    body: { _ in })
            ))
        cases.append(
            (
                "a return without a reply serial",
                WireWriter.message(type: 2, serial: 1, fields: [], signature: "", body: { _ in })
            ))
        // libdbus reads the first message of longer bytes; a message here is exactly its bytes.
        #expect(throws: DBusMarshalError.self) { try DBusMessage(wireBytes: good + [0]) }
        for (name, bytes) in cases {
            #expect(throws: DBusMarshalError.self, "\(name)") { try DBusMessage(wireBytes: bytes) }
            #expect(throws: DBusMarshalError.self, "libdbus: \(name)") { try DBusMessage(libdbusWireBytes: bytes) }
        }
    }

    // MARK: Bodies that are not what their signature says

    @Test(
        "a malformed body is an error where it is read: a string that is not UTF-8 or a Boolean of 2 reads nil and the cursor moves on; an array past the body or an invalid variant type stops it"
    )
    func malformedBodies() throws {
        let header: [WireWriter.Field] = [.path("/a"), .interface("a.b"), .member("M")]
        let badUTF8 = WireWriter.message(
            type: 4, serial: 1, fields: header, signature: "su",
            body: { body in
                body.uint32(2)
                body.bytes([0xC3, 0x28, 0])
                body.uint32(5)
            })
        let badBoolean = WireWriter.message(
            type: 4, serial: 1, fields: header, signature: "bu",
            body: { body in
                body.uint32(2)
                body.uint32(5)
            })
        let longArray = WireWriter.message(
            type: 4, serial: 1, fields: header, signature: "ayu",
            body: { body in
                body.uint32(1000)
                body.bytes([1, 2, 3, 4])
            })
        let badVariant = WireWriter.message(
            type: 4, serial: 1, fields: header, signature: "vu",
            body: { body in
                body.signature("aa")
                body.uint32(0)
                body.uint32(5)
            })
        let cases = [
            ("UTF-8", badUTF8, ["moved on"]), ("Boolean", badBoolean, ["moved on"]), ("array", longArray, []),
            ("variant", badVariant, []),
        ]
        for (name, bytes, expected) in cases {
            let message = try DBusMessage(wireBytes: bytes)
            #expect(throws: DBusMarshalError.self, "\(name)") { try message.arguments() }
            #expect(throws: DBusMarshalError.self, "libdbus: \(name)") { try DBusMessage(libdbusWireBytes: bytes) }
            let read = message.withBodyReader { body -> [String] in
                var seen: [String] = []
                if let text = body.string() { seen.append(text) }
                if let flag = body.bool() { seen.append("\(flag)") }
                if let data = body.bytes() { seen.append("\(data)") }
                if body.withContents({ _ in true }) != nil { seen.append("entered") }
                if body.next() { seen.append("moved on") }
                return seen
            }
            #expect(read == expected, "\(name)")
        }
    }

    @Test("variants nested deeper than the format allows are refused by both readers, without exhausting the stack")
    func deepVariants() throws {
        let depth = 200
        let bytes = WireWriter.message(
            type: 4, serial: 1, fields: [.path("/a"), .interface("a.b"), .member("M")], signature: "v",
            body: { body in
                for _ in 0..<depth { body.signature("v") }
                body.uint32(0)
            })
        // The last variant holds nothing readable; the depth limit is reached long before it.
        let message = try DBusMessage(wireBytes: bytes)
        #expect(throws: DBusMarshalError.nestingTooDeep) { try message.arguments() }
        #expect(throws: DBusMarshalError.self) { try DBusMessage(libdbusWireBytes: bytes) }
        let entered = message.withBodyReader { descend($0) }
        #expect(entered == 64)
    }

    @Test(
        "a message of a type the specification does not define is refused here (a connection drops it), though libdbus reads it"
    )
    func unknownType() throws {
        var bytes = try DBusMessage.signal(path: .root, interface: "org.bleagent.Wire", member: "Future").wireBytes()
        bytes[1] = 252
        #expect(throws: DBusMarshalError.self) { try DBusMessage(wireBytes: bytes) }
        _ = try DBusMessage(libdbusWireBytes: bytes)
    }

    @Test("a received message is refused, with a clear error, when it is sent or called again")
    func receivedMessagesAreNotResent() async throws {
        let received = try DBusMessage(
            wireBytes: try DBusMessage.methodCall(
                destination: "org.bluez", path: .root, interface: "org.bluez.Adapter1", member: "StartDiscovery"
            ).wireBytes())
        try await PrivateBus.with { bus in
            let connection = try await bus.connect()
            #expect(throws: DBusError.self) { try connection.send(received) }
            await #expect(throws: DBusError.self) { _ = try await connection.call(received) }
            await connection.close()
        }
    }

    // MARK: Helpers

    private func descend(_ reader: DBusBodyReader) -> Int {
        reader.withContents { 1 + descend($0) } ?? 0
    }

    private func patched(_ bytes: [UInt8], at offset: Int, _ value: UInt8) -> [UInt8] {
        var copy = bytes
        copy[offset] = value
        if offset == 8 { copy[9] = 0; copy[10] = 0; copy[11] = 0 }
        return copy
    }

    private func expectSameHeaders(_ ours: DBusMessage, _ theirs: DBusMessage) throws {
        #expect(ours.kind == theirs.kind)
        #expect(ours.serial == theirs.serial)
        #expect(ours.replySerial == theirs.replySerial)
        #expect(ours.path == theirs.path)
        #expect(ours.interface == theirs.interface)
        #expect(ours.member == theirs.member)
        #expect(ours.errorName == theirs.errorName)
        #expect(ours.sender == theirs.sender)
        #expect(ours.destination == theirs.destination)
        #expect(ours.signature == theirs.signature)
        #expect(ours.noReplyExpected == theirs.noReplyExpected)
    }
}
