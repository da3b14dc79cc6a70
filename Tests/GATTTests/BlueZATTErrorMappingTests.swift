import GATT
import Testing

@Suite struct BlueZATTErrorMappingTests {
    typealias Mapping = BlueZATTErrorMapping

    // bluetoothd 5.66 src/gatt-database.c dbus_error_to_att_ecode, as a table.
    @Test(arguments: [
        ("org.bluez.Error.Failed", "0x80", Mapping.Access.read, UInt8(0x80)),
        ("org.bluez.Error.Failed", "0x9f", .write, 0x9F),
        ("org.bluez.Error.Failed", "0x9F", .write, 0x9F),
        ("org.bluez.Error.Failed", "133", .read, 0x85),  // decimal
        ("org.bluez.Error.Failed", "0200", .read, 0x80),  // octal, as strtol base 0
        ("org.bluez.Error.Failed", " 0x85", .read, 0x85),  // strtol skips leading space
        ("org.bluez.Error.Failed", "+0x85", .read, 0x85),
        ("org.bluez.Error.Failed", "0x7f", .read, 0x0E),  // below the application range
        ("org.bluez.Error.Failed", "0xa0", .read, 0x0E),  // above it
        ("org.bluez.Error.Failed", "-1", .read, 0x0E),
        ("org.bluez.Error.Failed", "99999999999999999999", .read, 0x0E),  // saturates
        ("org.bluez.Error.Failed", "", .read, 0x0E),  // reads as 0
        ("org.bluez.Error.Failed", "sensor offline", .read, 0x80),  // not a number
        ("org.bluez.Error.Failed", "0x85 ", .read, 0x80),  // trailing text
        ("org.bluez.Error.Failed", "0x", .read, 0x80),
        ("org.bluez.Error.NotSupported", "whatever", .read, 0x06),
        ("org.bluez.Error.NotAuthorized", "", .write, 0x08),
        ("org.bluez.Error.InvalidValueLength", "", .write, 0x0D),
        ("org.bluez.Error.InvalidOffset", "", .read, 0x07),
        ("org.bluez.Error.InProgress", "", .write, 0xFE),
        ("org.bluez.Error.NotPermitted", "", .read, 0x02),
        ("org.bluez.Error.NotPermitted", "", .write, 0x03),
        ("org.bluez.Error.NotPaired", "", .read, 0x0E),
        ("org.bluez.Error.InvalidArguments", "", .write, 0x0E),
        ("org.freedesktop.DBus.Error.UnknownMethod", "", .read, 0x0E),
    ])
    func applicationRepliesBecomeTheATTCodeBluetoothdSends(
        name: String, message: String, access: Mapping.Access, code: UInt8
    ) {
        let reply = BlueZError(BlueZError.Name(rawValue: name), message)
        #expect(Mapping.attError(fromApplicationError: reply, access: access) == ATTError(code))
    }

    @Test func aFailedReplyWithoutMessageIsApplicationError0x80() {
        #expect(Mapping.attError(fromApplicationError: BlueZError(.failed), access: .read) == ATTError(0x80))
    }

    @Test func applicationRepliesRelayExactlyTheCodesBluetoothdCanCarry() {
        let relayable: Set<UInt8> = Set(0x80...0x9F).union([0x06, 0x07, 0x08, 0x0D, 0x0E, 0xFE])
        for access in [Mapping.Access.read, .write] {
            let permission: UInt8 = access == .read ? 0x02 : 0x03
            for code in UInt8.min...UInt8.max {
                let error = ATTError(code)
                let reply = Mapping.applicationError(for: error, access: access)
                let relayed = Mapping.relayedATTError(for: error, access: access)
                #expect(Mapping.attError(fromApplicationError: reply, access: access) == relayed)
                if relayable.contains(code) || code == permission {
                    #expect(relayed == error, "\(error) \(access)")
                } else {
                    #expect(relayed == .unlikelyError, "\(error) \(access)")
                }
            }
        }
        #expect(Mapping.applicationError(for: ATTError(0x85), access: .read) == BlueZError(.failed, "0x85"))
        #expect(Mapping.applicationError(for: .readNotPermitted, access: .read).name == .notPermitted)
        // Not relayable: Failed with the code, which bluetoothd logs and turns into 0x0E.
        #expect(Mapping.applicationError(for: .insufficientEncryption, access: .read) == BlueZError(.failed, "0x0f"))
    }

    // bluetoothd 5.66 src/gatt-client.c create_gatt_dbus_error, as a table.
    @Test(arguments: [
        (UInt8(0x02), "org.bluez.Error.NotPermitted", "Read not permitted"),
        (0x03, "org.bluez.Error.NotPermitted", "Write not permitted"),
        (0x05, "org.bluez.Error.NotPermitted", "Not paired"),
        (0x0C, "org.bluez.Error.NotPermitted", "Not paired"),
        (0x0F, "org.bluez.Error.NotPermitted", "Not paired"),
        (0x07, "org.bluez.Error.InvalidArguments", "Invalid offset"),
        (0x0D, "org.bluez.Error.InvalidArguments", "Invalid Length"),
        (0x08, "org.bluez.Error.NotAuthorized", "Operation Not Authorized"),
        (0x06, "org.bluez.Error.NotSupported", "Operation is not supported"),
        (0x01, "org.bluez.Error.Failed", "Operation failed with ATT error: 0x01"),
        (0x0E, "org.bluez.Error.Failed", "Operation failed with ATT error: 0x0e"),
        (0x85, "org.bluez.Error.Failed", "Operation failed with ATT error: 0x85"),
        (0xFD, "org.bluez.Error.Failed", "Operation failed with ATT error: 0xfd"),
        (0x00, "org.bluez.Error.Failed", "Operation failed"),
    ])
    func remoteATTErrorsSurfaceToClientsAsBluetoothdReportsThem(code: UInt8, name: String, message: String) {
        let error = Mapping.clientError(for: ATTError(code))
        #expect(error == BlueZError(BlueZError.Name(rawValue: name), message))
    }

    @Test func clientErrorsGiveBackTheATTCodeWhereBlueZKeepsIt() {
        for code in UInt8(1)...UInt8.max {
            let cause = Mapping.cause(ofClientError: Mapping.clientError(for: ATTError(code)))
            if [0x05, 0x0C, 0x0F].contains(code) {
                #expect(cause == .insufficientSecurity)
            } else {
                #expect(cause == .att(ATTError(code)), "\(ATTError(code))")
            }
        }
    }

    @Test func localBlueZFailuresAreNotMistakenForATTErrors() {
        let local = [
            BlueZError(.failed, "Not connected"),
            BlueZError(.failed, "Operation failed"),
            BlueZError(.failed, "Operation failed with ATT error: 0x1"),
            BlueZError(.failed, "Connection timed out"),
            BlueZError(.inProgress, "In Progress"),
            BlueZError(.invalidArguments, "Invalid arguments in method call"),
            BlueZError(.notPermitted, "Notify acquired"),
            BlueZError(.notConnected, nil),
        ]
        for error in local {
            #expect(Mapping.cause(ofClientError: error) == .notATT, "\(error)")
        }
    }

    @Test func errorsDescribeThemselvesWithTheirDBusName() {
        #expect(
            BlueZError(.notPermitted, "Read not permitted").description
                == "org.bluez.Error.NotPermitted: Read not permitted")
        #expect(BlueZError(.failed).description == "org.bluez.Error.Failed")
    }
}
