import BLE
import GATT
import Testing

@Suite struct ObjectTreeMirrorTests {
    let adapter = "/org/bluez/hci0"
    let device = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF"
    let t0 = BLEInstant.zero

    func deviceProperties(rssi: Int64, connected: Bool = false) -> PropertyMap {
        [
            "Address": .string("AA:BB:CC:DD:EE:FF"), "AddressType": .string("random"), "Adapter": .objectPath(adapter),
            "RSSI": .int(rssi), "Connected": .bool(connected),
        ]
    }

    /// The adapter as the backend decodes it: its address names the devices' identifiers.
    var hci0: AdapterStatus { AdapterStatus(id: adapter, name: "hci0", address: "00:11:22:33:44:55", powered: true) }

    /// A tree as BlueZ serves it; the mirror keeps the adapter's object like any other (the backend takes
    /// Adapter1 out and hands the adapters over as ``AdapterStatus`` values).
    var snapshot: ObjectTreeSnapshot {
        [
            adapter: [BlueZInterface.adapter: ["Address": .string("00:11:22:33:44:55"), "Powered": .bool(true)]],
            device: [BlueZInterface.device: deviceProperties(rssi: -40)],
        ]
    }

    @Test func deltasBeforeTheSnapshotAreBufferedThenAppliedOnlyIfNewerThanIt() {
        var mirror = ObjectTreeMirror()
        let older = ObjectTreeDelta.propertiesChanged(
            path: device, interface: BlueZInterface.device, changed: ["RSSI": .int(-50)], invalidated: [])
        let newer = ObjectTreeDelta.propertiesChanged(
            path: device, interface: BlueZInterface.device, changed: ["RSSI": .int(-30)], invalidated: [])
        #expect(mirror.receive(older, serial: 10, now: t0).isEmpty)
        #expect(mirror.receive(newer, serial: 12, now: t0).isEmpty)
        #expect(!mirror.isLoaded)
        let changes = mirror.applySnapshot(snapshot, serial: 11, now: t0)
        #expect(mirror.isLoaded)
        #expect(mirror.device(at: device)?.rssi == -30, "the newer delta is not lost")
        #expect(
            changes == [
                .added(path: adapter, interface: BlueZInterface.adapter),
                .added(path: device, interface: BlueZInterface.device),
                .changed(path: device, interface: BlueZInterface.device, keys: ["RSSI"]),
            ], "the older one, already in the snapshot, is not applied again")
    }

    @Test func anInterfacesAddedAlreadyInTheSnapshotIsNotReportedTwice() {
        var mirror = ObjectTreeMirror()
        _ = mirror.receive(
            .interfacesAdded(path: device, interfaces: [BlueZInterface.device: deviceProperties(rssi: -40)]), now: t0)
        let changes = mirror.applySnapshot(snapshot, now: t0)
        #expect(changes.filter { $0 == .added(path: device, interface: BlueZInterface.device) }.count == 1)
        #expect(changes.count == 2)
    }

    @Test func withoutSerialsBufferedDeltasAreReplayedInOrder() {
        var mirror = ObjectTreeMirror()
        _ = mirror.receive(.interfacesRemoved(path: device, interfaces: [BlueZInterface.device]), now: t0)
        _ = mirror.applySnapshot(snapshot, now: t0)
        #expect(mirror.device(at: device) == nil)
    }

    @Test func deltasApplyAndUnchangedValuesReportNothing() {
        var mirror = ObjectTreeMirror()
        _ = mirror.applySnapshot(snapshot, now: t0)
        let same = ObjectTreeDelta.propertiesChanged(
            path: device, interface: BlueZInterface.device, changed: ["RSSI": .int(-40)], invalidated: [])
        #expect(mirror.receive(same, now: t0).isEmpty)
        let invalidate = ObjectTreeDelta.propertiesChanged(
            path: device, interface: BlueZInterface.device, changed: ["Connected": .bool(true)], invalidated: ["RSSI"])
        #expect(
            mirror.receive(invalidate, now: t0) == [
                .changed(path: device, interface: BlueZInterface.device, keys: ["Connected", "RSSI"])
            ])
        #expect(mirror.device(at: device)?.rssi == nil)
        #expect(mirror.device(at: device)?.connected == true)
        #expect(
            mirror.receive(.interfacesRemoved(path: device, interfaces: [BlueZInterface.device]), now: t0) == [
                .removed(path: device, interface: BlueZInterface.device)
            ])
        #expect(mirror.interfaces(at: device) == nil)
    }

    @Test func aCharacteristicValueSignalledAgainWithTheSameBytesIsReportedEachTime() {
        // bluetoothd signals every notification or indication as a Value PropertiesChanged; the
        // same bytes twice (a re-indicated payment status) are two events, not one state.
        let characteristic = device + "/service000a/char000b"
        let value = ObjectTreeDelta.propertiesChanged(
            path: characteristic, interface: BlueZInterface.gattCharacteristic, changed: ["Value": .bytes([1, 2])],
            invalidated: [])
        let reported = ObjectTreeChange.changed(
            path: characteristic, interface: BlueZInterface.gattCharacteristic, keys: ["Value"])
        var mirror = ObjectTreeMirror()
        var tree = snapshot
        tree[characteristic] = [
            BlueZInterface.gattCharacteristic: [
                "UUID": .string("2a37"), "Value": .bytes([1, 2]), "Notifying": .bool(true),
            ]
        ]
        // Buffered without serials: maybe already in the snapshot, so not reported.
        _ = mirror.receive(value, now: t0)
        #expect(!mirror.applySnapshot(tree, now: t0).contains(reported))
        #expect(mirror.receive(value, serial: 20, now: t0) == [reported])
        #expect(mirror.receive(value, serial: 21, now: t0) == [reported])
        let notifying = ObjectTreeDelta.propertiesChanged(
            path: characteristic, interface: BlueZInterface.gattCharacteristic, changed: ["Notifying": .bool(true)],
            invalidated: [])
        #expect(mirror.receive(notifying, now: t0).isEmpty, "other unchanged properties still report nothing")

        // Buffered with a serial newer than the snapshot's: live, reported; older: already in it.
        var second = ObjectTreeMirror()
        _ = second.receive(value, serial: 5, now: t0)
        _ = second.receive(value, serial: 9, now: t0)
        #expect(second.applySnapshot(tree, serial: 7, now: t0).filter { $0 == reported }.count == 1)
    }

    @Test func aChangeForAnUnknownObjectAsksForARefresh() {
        var mirror = ObjectTreeMirror()
        _ = mirror.applySnapshot([:], now: t0)
        let delta = ObjectTreeDelta.propertiesChanged(
            path: device, interface: BlueZInterface.device, changed: ["RSSI": .int(-40)], invalidated: [])
        #expect(mirror.receive(delta, now: t0) == [.needsRefresh(path: device, interface: BlueZInterface.device)])
        #expect(mirror.objectCount == 0)
    }

    @Test func staleUnconnectedDevicesAndTheirChildrenAreDroppedButConnectedOnesKept() {
        var mirror = ObjectTreeMirror(limits: .init(staleDeviceAge: .seconds(60), maximumDevices: 100))
        let connected = "/org/bluez/hci0/dev_11_22_33_44_55_66"
        var tree = snapshot
        tree[device + "/service0001"] = [BlueZInterface.gattService: ["UUID": .string("180d")]]
        tree[connected] = [BlueZInterface.device: ["Address": .string("11:22:33:44:55:66"), "Connected": .bool(true)]]
        _ = mirror.applySnapshot(tree, now: t0)
        #expect(mirror.prune(now: t0 + .seconds(59)).isEmpty)
        #expect(mirror.nextPruneTime() == t0 + .seconds(60))
        let changes = mirror.prune(now: t0 + .seconds(60))
        #expect(
            changes == [
                .removed(path: device, interface: BlueZInterface.device),
                .removed(path: device + "/service0001", interface: BlueZInterface.gattService),
            ])
        #expect(mirror.interfaces(at: connected) != nil)
        #expect(mirror.interfaces(at: adapter) != nil)
    }

    @Test("at its object bound the mirror makes room by evicting a device it may drop, else refuses the new object")
    func theObjectBoundEvictsDroppableDevicesThenRefuses() {
        var mirror = ObjectTreeMirror(limits: .init(maximumDevices: 100, maximumObjects: 3))
        let connected = "/org/bluez/hci0/dev_11_22_33_44_55_66"
        var tree = snapshot
        tree[connected] = [BlueZInterface.device: ["Address": .string("11:22:33:44:55:66"), "Connected": .bool(true)]]
        _ = mirror.applySnapshot(tree, now: t0)
        #expect(mirror.objectCount == 3)

        // A service of the connected device takes the unconnected device's place.
        let service = connected + "/service0001"
        let added = mirror.receive(
            .interfacesAdded(path: service, interfaces: [BlueZInterface.gattService: ["UUID": .string("180d")]]),
            now: t0 + .seconds(1))
        #expect(
            added == [
                .removed(path: device, interface: BlueZInterface.device),
                .added(path: service, interface: BlueZInterface.gattService),
            ])
        #expect(mirror.counters.devicesEvicted == 1)

        // Nothing left to drop: the next object is refused, and what is held stays.
        let characteristic = service + "/char0002"
        let refused = mirror.receive(
            .interfacesAdded(
                path: characteristic, interfaces: [BlueZInterface.gattCharacteristic: ["UUID": .string("2a37")]]),
            now: t0 + .seconds(2))
        #expect(refused.isEmpty)
        #expect(mirror.counters.objectsRefused == 1)
        #expect(mirror.interfaces(at: characteristic) == nil)
        #expect(mirror.objectCount == 3)
        #expect(mirror.interfaces(at: connected) != nil && mirror.interfaces(at: service) != nil)

        // A flood of new devices never takes the mirror past its bound.
        for index in 0..<50 {
            _ = mirror.receive(
                .interfacesAdded(
                    path: adapter + "/dev_C0_00_00_00_00_\(index < 10 ? "0" : "")\(index)",
                    interfaces: [BlueZInterface.device: ["Address": .string("C0:00:00:00:00:\(index)")]]),
                now: t0 + .seconds(3))
            #expect(mirror.objectCount <= 3)
        }
        #expect(mirror.counters.objectsRefused == 51)
    }

    @Test func hearingFromADeviceKeepsItFresh() {
        var mirror = ObjectTreeMirror(limits: .init(staleDeviceAge: .seconds(60)))
        _ = mirror.applySnapshot(snapshot, now: t0)
        let delta = ObjectTreeDelta.propertiesChanged(
            path: device, interface: BlueZInterface.device, changed: ["RSSI": .int(-41)], invalidated: [])
        _ = mirror.receive(delta, now: t0 + .seconds(50))
        #expect(mirror.prune(now: t0 + .seconds(100)).isEmpty)
    }

    @Test(
        "by default a device without a signal stays past bluetoothd's TemporaryTimeout (bluetoothd hears it unchanged) and goes with bluetoothd's InterfacesRemoved"
    )
    func silentDevicesStayUntilBluetoothdRemovesThem() {
        var mirror = ObjectTreeMirror()
        _ = mirror.applySnapshot(snapshot, now: t0)
        #expect(mirror.prune(now: t0 + .seconds(600)).isEmpty)
        #expect(mirror.device(at: device) != nil)
        let removed = mirror.receive(
            .interfacesRemoved(path: device, interfaces: [BlueZInterface.device]), now: t0 + .seconds(601))
        #expect(removed == [.removed(path: device, interface: BlueZInterface.device)])
        #expect(mirror.device(at: device) == nil)
        #expect(mirror.prunableDeviceCount == 0)
        #expect(mirror.counters.devicesExpired == 0)
    }

    @Test func theOldestUnconnectedDevicesGoBeyondTheMaximum() {
        var mirror = ObjectTreeMirror(limits: .init(staleDeviceAge: .seconds(600), maximumDevices: 1))
        _ = mirror.applySnapshot([:], now: t0)
        let other = "/org/bluez/hci0/dev_01"
        _ = mirror.receive(.interfacesAdded(path: device, interfaces: [BlueZInterface.device: [:]]), now: t0)
        _ = mirror.receive(
            .interfacesAdded(path: other, interfaces: [BlueZInterface.device: [:]]), now: t0 + .seconds(1))
        #expect(mirror.prune(now: t0 + .seconds(2)) == [.removed(path: device, interface: BlueZInterface.device)])
    }

    @Test func resetForgetsEverythingAndBuffersAgain() {
        var mirror = ObjectTreeMirror()
        _ = mirror.applySnapshot(snapshot, now: t0)
        #expect(mirror.reset().count == 2)
        #expect(!mirror.isLoaded)
        #expect(mirror.receive(.interfacesRemoved(path: device, interfaces: [BlueZInterface.device]), now: t0).isEmpty)
    }

    @Test func typedViewsReadTheTree() {
        var mirror = ObjectTreeMirror()
        var tree = snapshot
        let service = device + "/service000a"
        let characteristic = service + "/char000b"
        tree[service] = [
            BlueZInterface.gattService: [
                "UUID": .string("0000180d-0000-1000-8000-00805f9b34fb"), "Device": .objectPath(device),
            ]
        ]
        tree[characteristic] = [
            BlueZInterface.gattCharacteristic: [
                "UUID": .string("00002a37-0000-1000-8000-00805f9b34fb"), "Service": .objectPath(service),
            ]
        ]
        mirror.setAdapters([hci0])
        _ = mirror.applySnapshot(tree, now: t0)
        #expect(mirror.adapterAddress(of: adapter) == "00:11:22:33:44:55")
        #expect(mirror.devices.first?.addressType == .random)
        let id = PeripheralIdentifier(adapter: "00:11:22:33:44:55", address: "AA:BB:CC:DD:EE:FF", addressType: .random)
        #expect(mirror.identifier(ofDeviceAt: device) == id)
        #expect(mirror.devicePath(for: id) == device)
        #expect(mirror.services(ofDeviceAt: device).map(\.uuid) == [.heartRate])
        #expect(mirror.characteristics(ofServiceAt: service).map(\.uuid) == [.heartRateMeasurement])
    }

    @Test("a device's newest Device1 properties are all read back as sent, the kept ones only, once each")
    func aDevicesNewestPropertiesAreReadBackAsSent() {
        var mirror = ObjectTreeMirror()
        _ = mirror.applySnapshot(snapshot, now: t0)
        let heard: PropertyMap = [
            "RSSI": .int(-47), "Name": .string("Sensor 4"), "Alias": .string("Sensor 4"),
            "ManufacturerData": .dictionary([.uint(0x0059): .bytes([9, 8])]),
            "ServiceData": .dictionary([.string("fcd2"): .bytes([0x40])]), "Bonded": .bool(false),
            "UUIDs": .array([.string("0000180d-0000-1000-8000-00805f9b34fb"), .string("1234")]),
        ]
        let changes = mirror.receive(
            .propertiesChanged(
                path: device, interface: BlueZInterface.device, changed: heard, invalidated: ["TxPower"]),
            now: t0)
        #expect(
            changes == [
                .changed(
                    path: device, interface: BlueZInterface.device,
                    keys: ["Alias", "ManufacturerData", "Name", "RSSI", "ServiceData", "UUIDs"])
            ])
        var expected = deviceProperties(rssi: -47)
        for (key, value) in heard where key != "Bonded" { expected[key] = value }
        #expect(mirror.properties(at: device, interface: BlueZInterface.device) == expected)
        #expect(mirror.interfaces(at: device) == [BlueZInterface.device: expected])
        let model = mirror.device(at: device)
        #expect(model?.rssi == -47 && model?.advertisement.localName == "Sensor 4")
        #expect(model?.advertisement.manufacturerData == [0x0059: [9, 8]])
        #expect(model?.advertisement.serviceData == [BluetoothUUID(uuid16: 0xFCD2): [0x40]])
        #expect(model?.advertisement.serviceUUIDs == [.heartRate, BluetoothUUID(uuid16: 0x1234)])
    }

    @Test("a change of a kept property the typed view does not show (Alias, AdvertisingFlags) is still reported")
    func changesOfPropertiesOutsideTheTypedViewAreReported() {
        var mirror = ObjectTreeMirror()
        _ = mirror.applySnapshot(snapshot, now: t0)
        let before = mirror.device(at: device)
        for (key, value) in [("Alias", PropertyValue.string("AA-BB-CC-DD-EE-FF")), ("AdvertisingFlags", .bytes([0]))] {
            let changed = ObjectTreeDelta.propertiesChanged(
                path: device, interface: BlueZInterface.device, changed: [key: value], invalidated: [])
            #expect(
                mirror.receive(changed, now: t0) == [
                    .changed(path: device, interface: BlueZInterface.device, keys: [key])
                ])
            #expect(mirror.receive(changed, now: t0).isEmpty, "the same value again is no change")
            #expect(mirror.properties(at: device, interface: BlueZInterface.device)?[key] == value)
        }
        #expect(mirror.device(at: device)?.advertisement.localName == before?.advertisement.localName)
        #expect(mirror.device(at: device)?.advertisement.isConnectable == false)
    }

    @Test("objects listing the same property-less interfaces (as bluetoothd lists every device) keep their own changes")
    func objectsWithTheSameInterfacesKeepTheirOwnChanges() {
        var mirror = ObjectTreeMirror()
        _ = mirror.applySnapshot(snapshot, now: t0)
        let other = "/org/bluez/hci0/dev_11_22_33_44_55_66"
        let standard: InterfaceMap = [
            "org.freedesktop.DBus.Introspectable": [:], "org.freedesktop.DBus.Properties": [:],
        ]
        for path in [device, other] {
            var interfaces = standard
            interfaces[BlueZInterface.device] = ["Address": .string(path == device ? "AA:BB:CC:DD:EE:FF" : "11:22")]
            _ = mirror.receive(.interfacesAdded(path: path, interfaces: interfaces), now: t0)
        }
        let battery = "org.bluez.Battery1"
        _ = mirror.receive(.interfacesAdded(path: other, interfaces: [battery: ["Percentage": .uint(90)]]), now: t0)
        _ = mirror.receive(
            .propertiesChanged(path: other, interface: battery, changed: ["Percentage": .uint(80)], invalidated: []),
            now: t0)
        #expect(mirror.interfaces(at: other)?[battery] == ["Percentage": .uint(80)])
        #expect(mirror.interfaces(at: device)?[battery] == nil)
        #expect(
            mirror.interfaces(at: device)?.keys.sorted() == (Array(standard.keys) + [BlueZInterface.device]).sorted())
        _ = mirror.receive(.interfacesRemoved(path: other, interfaces: [battery]), now: t0)
        _ = mirror.receive(
            .interfacesRemoved(path: device, interfaces: ["org.freedesktop.DBus.Properties", BlueZInterface.device]),
            now: t0)
        #expect(mirror.interfaces(at: device) == ["org.freedesktop.DBus.Introspectable": [:]])
        #expect(mirror.interfaces(at: other)?.count == 3)
        #expect(mirror.properties(at: other, interface: BlueZInterface.device) == ["Address": .string("11:22")])
    }

    @Test func aSnapshotArrivingWhileLoadedKeepsWhatNewerDeltasChanged() {
        var mirror = ObjectTreeMirror()
        _ = mirror.applySnapshot(snapshot, serial: 10, now: t0)
        let other = "/org/bluez/hci0/dev_11_22_33_44_55_66"
        mirror.snapshotRequested()
        // Applied live before the reply (serial 20) is handled: 25 and 26 are newer than it, 15 older.
        _ = mirror.receive(
            .propertiesChanged(
                path: adapter, interface: BlueZInterface.adapter, changed: ["Powered": .bool(false)], invalidated: []),
            serial: 15, now: t0)
        _ = mirror.receive(
            .propertiesChanged(
                path: device, interface: BlueZInterface.device, changed: ["RSSI": .int(-20)], invalidated: []),
            serial: 25, now: t0)
        _ = mirror.receive(
            .interfacesAdded(
                path: other, interfaces: [BlueZInterface.device: ["Address": .string("11:22:33:44:55:66")]]),
            serial: 26, now: t0)
        var reply = snapshot
        reply[adapter]?[BlueZInterface.adapter]?["Powered"] = .bool(false)
        reply[device]?[BlueZInterface.device]?["RSSI"] = .int(-60)
        let changes = mirror.applySnapshot(reply, serial: 20, now: t0)
        #expect(mirror.device(at: device)?.rssi == -20, "the reply is older than the RSSI signal")
        #expect(mirror.device(at: other) != nil, "nor is a device added after it removed")
        #expect(changes.isEmpty)
        // Without a pending request the snapshot is the truth again.
        let later = mirror.applySnapshot(reply, serial: 40, now: t0)
        #expect(mirror.device(at: device)?.rssi == -60)
        #expect(mirror.device(at: other) == nil)
        #expect(
            later == [
                .removed(path: other, interface: BlueZInterface.device),
                .changed(path: device, interface: BlueZInterface.device, keys: ["RSSI"]),
            ])
    }

    @Test func theBufferBeforeTheFirstSnapshotIsBoundedAndItsOverflowAsksForAnotherSnapshot() {
        var mirror = ObjectTreeMirror(limits: .init(maximumBufferedDeltas: 4))
        for rssi in 0..<10 {
            _ = mirror.receive(
                .propertiesChanged(
                    path: device, interface: BlueZInterface.device, changed: ["RSSI": .int(Int64(-rssi))],
                    invalidated: []),
                serial: UInt32(100 + rssi), now: t0)
        }
        #expect(mirror.counters.bufferedDeltasDropped == 8)
        #expect(mirror.needsSnapshot)
        _ = mirror.applySnapshot(snapshot, serial: 50, now: t0)
        #expect(mirror.device(at: device)?.rssi == -9, "what was kept is applied")
        #expect(mirror.needsSnapshot, "what was dropped needs a fresh snapshot")
        mirror.snapshotScheduled()
        #expect(!mirror.needsSnapshot)
    }

    @Test func indicesFollowEachDeltaWithoutWalkingTheTree() {
        var mirror = ObjectTreeMirror()
        _ = mirror.applySnapshot([:], now: t0)
        let service = device + "/service000a"
        let characteristic = service + "/char000b"
        let descriptor = characteristic + "/desc000d"
        _ = mirror.receive(
            .interfacesAdded(path: device, interfaces: [BlueZInterface.device: deviceProperties(rssi: -40)]), now: t0)
        #expect(mirror.identifier(ofDeviceAt: device) == nil, "no adapter address yet")
        mirror.updateAdapter(hci0)
        let id = PeripheralIdentifier(adapter: "00:11:22:33:44:55", address: "AA:BB:CC:DD:EE:FF", addressType: .random)
        #expect(mirror.identifier(ofDeviceAt: device) == id, "the adapter's address arriving names its devices")
        #expect(mirror.devicePath(for: id) == device)
        _ = mirror.receive(
            .interfacesAdded(path: service, interfaces: [BlueZInterface.gattService: ["UUID": .string("180d")]]),
            now: t0)
        _ = mirror.receive(
            .interfacesAdded(
                path: characteristic, interfaces: [BlueZInterface.gattCharacteristic: ["UUID": .string("2a37")]]),
            now: t0)
        _ = mirror.receive(
            .interfacesAdded(path: descriptor, interfaces: [BlueZInterface.gattDescriptor: ["UUID": .string("2902")]]),
            now: t0)
        #expect(mirror.services(ofDeviceAt: device).map(\.path) == [service])
        #expect(mirror.characteristics(ofServiceAt: service).map(\.uuid) == [.heartRateMeasurement])
        #expect(mirror.descriptors(ofCharacteristicAt: characteristic).map(\.path) == [descriptor])
        #expect(mirror.devices(ofAdapter: adapter).map(\.path) == [device])
        _ = mirror.receive(
            .propertiesChanged(
                path: device, interface: BlueZInterface.device, changed: ["Connected": .bool(true)], invalidated: []),
            now: t0)
        #expect(mirror.connectedDevices.map(\.path) == [device])
        #expect(mirror.prunableDeviceCount == 0, "a connected device is never pruned")
        _ = mirror.receive(.interfacesRemoved(path: service, interfaces: [BlueZInterface.gattService]), now: t0)
        #expect(mirror.services(ofDeviceAt: device).isEmpty)
        _ = mirror.receive(.interfacesRemoved(path: device, interfaces: [BlueZInterface.device]), now: t0)
        #expect(mirror.devicePath(for: id) == nil)
        #expect(mirror.connectedDevices.isEmpty)
        #expect(mirror.deviceCount == 0)
    }
}
