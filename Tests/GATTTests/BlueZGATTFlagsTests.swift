import GATT
import Testing

@Suite struct BlueZGATTFlagsTests {
    typealias Flags = BlueZGATTFlags.Characteristic

    /// Every flag gatt-api.txt lists for GattCharacteristic1, in its order.
    static let allCharacteristicFlags = [
        "broadcast", "read", "write-without-response", "write", "notify", "indicate",
        "authenticated-signed-writes", "extended-properties", "reliable-write", "writable-auxiliaries",
        "encrypt-read", "encrypt-write", "encrypt-notify", "encrypt-indicate", "encrypt-authenticated-read",
        "encrypt-authenticated-write", "encrypt-authenticated-notify", "encrypt-authenticated-indicate",
        "secure-read", "secure-write", "secure-notify", "secure-indicate", "authorize",
    ]

    @Test func remoteFlagsAsBlueZReportsThemParseAndPrintBackUnchanged() {
        // src/gatt-client.c prints the 8 property bits, then the 2 extended ones.
        let lists: [[String]] = [
            ["read", "notify"],
            ["write-without-response", "write"],
            ["broadcast", "read", "indicate", "authenticated-signed-writes"],
            ["read", "write", "extended-properties", "reliable-write", "writable-auxiliaries"],
        ]
        for list in lists {
            let flags = Flags(bluezFlags: list)
            #expect(flags.unknownFlags.isEmpty)
            #expect(flags.bluezFlags == list)
        }
    }

    @Test func readAndNotifyMeanReadablePropertiesAndNoSecurity() {
        let flags = Flags(bluezFlags: ["read", "notify"])
        #expect(flags.properties == [.read, .notify])
        #expect(flags.permissions == .readable)
        #expect(flags.subscriptionPermissions == [])
        #expect(flags.extendedProperties == [])
    }

    @Test func securityFlagsAddThePropertyAndThePermission() {
        let flags = Flags(bluezFlags: [
            "encrypt-read", "encrypt-authenticated-write", "secure-notify", "authorize",
        ])
        #expect(flags.properties == [.read, .write, .notify])
        #expect(
            flags.permissions == [
                .readable, .readEncryptionRequired, .writeable, .writeAuthenticationRequired,
                .authorizationRequired,
            ])
        #expect(flags.subscriptionPermissions == .writeSecureConnectionsRequired)
        // The most specific flags come back: no plain "read" next to "encrypt-read".
        #expect(flags.bluezFlags == ["encrypt-read", "encrypt-authenticated-write", "secure-notify", "authorize"])
    }

    @Test func reliableWriteImpliesExtendedPropertiesAndWriteAccess() {
        let flags = Flags(bluezFlags: ["reliable-write"])
        #expect(flags.properties == .extendedProperties)
        #expect(flags.extendedProperties == .reliableWrite)
        #expect(flags.permissions == .writeable)
        #expect(flags.bluezFlags == ["extended-properties", "reliable-write"])
    }

    @Test(arguments: allCharacteristicFlags)
    func eachKnownFlagKeepsItsMeaningThroughARoundTrip(flag: String) {
        let parsed = Flags(bluezFlags: [flag])
        #expect(parsed.unknownFlags.isEmpty)
        #expect(parsed.bluezFlags.contains(flag))
        #expect(Flags(bluezFlags: parsed.bluezFlags) == parsed)
    }

    @Test func anyCombinationKeepsItsMeaningThroughARoundTrip() {
        // Every pair and a few larger sets: printing never changes what BlueZ would build.
        let all = Self.allCharacteristicFlags
        var lists = all.indices.flatMap { i in all.indices.map { j in [all[i], all[j]] } }
        lists.append(all)
        lists.append(["secure-notify", "indicate", "encrypt-write", "write-without-response"])
        for list in lists {
            let parsed = Flags(bluezFlags: list)
            #expect(Flags(bluezFlags: parsed.bluezFlags) == parsed, "\(list)")
        }
    }

    @Test func unknownFlagsAreReportedInOrderNotDropped() throws {
        let flags = Flags(bluezFlags: ["read", "x-notify", "bogus", "notify"])
        #expect(flags.unknownFlags == ["x-notify", "bogus"])
        #expect(flags.properties == [.read, .notify])
        let error = #expect(throws: BlueZGATTFlags.UnknownFlagsError.self) { try flags.requireKnown() }
        #expect(error?.flags == ["x-notify", "bogus"])
        #expect(error?.description == "unknown GattCharacteristic1 flags: \"x-notify\", \"bogus\"")
        try Flags(bluezFlags: ["read"]).requireKnown()
    }

    @Test func descriptorFlagsMapToPermissionsBothWays() throws {
        let flags = BlueZGATTFlags.Descriptor(bluezFlags: ["encrypt-read", "write", "authorize"])
        #expect(flags.permissions == [.readable, .readEncryptionRequired, .writeable, .authorizationRequired])
        #expect(flags.bluezFlags == ["write", "encrypt-read", "authorize"])
        #expect(BlueZGATTFlags.Descriptor(permissions: [.readable, .writeable]).bluezFlags == ["read", "write"])
        // Read security alone implies readable, as in BlueZ.
        #expect(BlueZGATTFlags.Descriptor(permissions: .readSecureConnectionsRequired).bluezFlags == ["secure-read"])
        let odd = BlueZGATTFlags.Descriptor(bluezFlags: ["read", "notify"])
        #expect(odd.unknownFlags == ["notify"])
        #expect(throws: BlueZGATTFlags.UnknownFlagsError(flags: ["notify"], interface: .descriptor)) {
            try odd.requireKnown()
        }
    }

    @Test func modelValuesPrintTheirFlags() {
        let measurement = GATTCharacteristic(uuid: .heartRateMeasurement, properties: .notify)
        #expect(measurement.bluezFlags == ["notify"])
        let controlPoint = GATTCharacteristic(
            uuid: .heartRateControlPoint, properties: .write,
            permissions: [.writeable, .writeEncryptionRequired])
        #expect(controlPoint.bluezFlags == ["encrypt-write"])
        let userDescription = GATTDescriptor(uuid: .characteristicUserDescription, permissions: [.readable])
        #expect(userDescription.bluezFlags == ["read"])
    }

    @Test func securityWithoutItsPropertyHasNoFlag() {
        // BlueZ cannot say "encrypted write" without the write property: nothing is printed for it.
        let flags = Flags(properties: .read, permissions: [.readable, .writeEncryptionRequired])
        #expect(flags.bluezFlags == ["read"])
    }

    @Test func optionSetsDescribeThemselves() {
        #expect(CharacteristicProperties([.read, .notify]).description == "[read, notify]")
        #expect(CharacteristicProperties().description == "[]")
        #expect(CharacteristicExtendedProperties(rawValue: 0x0101).description == "[reliableWrite, 0x100]")
        #expect(
            AttributePermissions([.readable, .writeEncryptionRequired]).description
                == "[readable, writeEncryptionRequired]")
    }
}
