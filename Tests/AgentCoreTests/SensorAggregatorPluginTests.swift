import AgentCore
import BLE
import BLETesting
import GATT
import Glibc
import JSON
import RoleKit
import Testing

/// The sensor aggregator plugin loaded from libSensorAggregator.so as the
/// agent loads it, over a scripted peripheral backend (blesim's local GATT
/// server is not on this branch yet): advertising, GATT, ingest, flow
/// control, Config writes, persistence across a restart.
@Suite("sensor aggregator plugin", .serialized, .timeLimit(.minutes(2)))
struct SensorAggregatorPluginTests {
    let central = PeripheralIdentifier(adapter: "00:11:22:33:44:55", address: "66:55:44:33:22:11", addressType: .random)
    let temperature = LocalCharacteristic(service: .environmentalSensing, uuid: .temperature)
    let bthome = BluetoothUUID(uuid16: 0xFCD2)
    // docs/profiles/sensor-aggregator.md (the test does not link the plugin's module: it loads the .so).
    let aggregatesService = BluetoothUUID(high: 0x0714_0EC0_D234_4118, low: 0xA438_6859_4541_4E79)
    let configCharacteristic = BluetoothUUID(high: 0x0714_0EC2_D234_4118, low: 0xA438_6859_4541_4E79)

    func config(_ directory: String) -> JSON {
        [
            "sensors": [
                [
                    "id": "room", "kind": "temperature", "notifyDelta": 0.5,
                    "source": [
                        "type": "file", "path": .string("\(directory)/temp"), "scale": 0.01, "pollSeconds": 0.1,
                    ],
                ],
                [
                    "id": "hum", "kind": "humidity",
                    "source": ["type": "simulated", "waveform": "constant", "base": 46.65, "pollSeconds": 0.1],
                ],
                ["id": "baro", "kind": "pressure", "source": ["type": "ingest"]],
                [
                    "id": "bat", "kind": "battery",
                    "source": ["type": "simulated", "waveform": "constant", "base": 87, "pollSeconds": 0.1],
                ],
            ],
            "ingest": ["socketPath": .string("\(directory)/ingest.sock")],
            "notification": ["intervalSeconds": 1], "flushSeconds": 1,
            "advertising": ["localName": "gw-1"], "deviceInformation": ["manufacturer": "bleagent"],
        ]
    }

    func startPlugin(
        _ directory: String, manager: PeripheralManager, host: RecordingPluginHost
    ) async throws -> any RolePlugin {
        let descriptor = try PluginLoader().load(name: "SensorAggregator", role: .peripheral, from: buildDirectory)
        #expect(descriptor.namespace == "sensors")
        let context = RoleContext(
            role: .peripheral, config: config(directory), logger: PluginLogger { _, _ in },
            state: PluginStateStore(directory: "\(directory)/state"), methods: host, events: host,
            manager: .peripheral(manager))
        let plugin = try descriptor.factory(context)
        try await plugin.start()
        return plugin
    }

    func call(_ host: RecordingPluginHost, _ method: String) async throws -> JSON {
        let handler = try #require(host.handler(method))
        return try await handler(PluginCall(method: method, params: nil, callerUid: 0, callerPid: 1))
    }

    @Test("BTHome advertisement, reads, notifications with flow control, Config writes, bad ingest lines counted")
    func servesTheNode() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        mkdir("\(directory.path)/state", 0o700)
        writeBytes("\(directory.path)/temp", Array("2314\n".utf8))
        let (manager, backend) = await FakePeripheralBackend.poweredOn()
        var calls = backend.calls.makeAsyncIterator()
        let host = RecordingPluginHost(namespace: "sensors")
        let plugin = try await startPlugin(directory.path, manager: manager, host: host)
        let socket = "\(directory.path)/ingest.sock"
        var info = stat()
        #expect(stat(socket, &info) == 0 && info.st_mode & 0o777 == 0o660, "the ingest socket is bound with mode 0660")
        sendDatagram(socket, "not json")
        sendDatagram(socket, "{}")
        sendDatagram(socket, #"{"sensor": "baro", "value": 101317, "unit": "Pa"}"#)

        // The advertisement is re-planned with the readings: bytes of the docs' fixture.
        let expected: [UInt8] = [0x40, 0x01, 0x57, 0x02, 0x0A, 0x09, 0x03, 0x39, 0x12, 0x04, 0xC5, 0x8B, 0x01]
        let advertised = await calls.next {
            if case .registerAdvertisement(let data, _) = $0 { return data.serviceData[bthome] == expected }
            return false
        }
        guard case .registerAdvertisement(let data, _) = advertised else {
            throw Fail("no advertisement with readings")
        }
        #expect(data.localName == "gw-1")
        #expect(data.serviceUUIDs == [.environmentalSensing])
        #expect(
            Set(manager.services.map(\.uuid))
                == [.environmentalSensing, .battery, .deviceInformation, aggregatesService])
        let ess = try #require(manager.services.first { $0.uuid == .environmentalSensing })
        #expect(ess.characteristic(.temperature)?.descriptor(.environmentalSensingMeasurement)?.value?.count == 11)

        // The bad lines were counted before the good one was recorded (one ordered stream).
        let stats = try await call(host, "sensors.ingest-stats")
        #expect(stats["accepted"]?.intValue == 1)
        #expect(stats["rejectedTotal"]?.intValue == 2)
        #expect(stats["rejected"]?["notJSON"]?.intValue == 1)

        // Read Temperature: 23.14 degC.
        backend.send(.request(ATTRequestInfo(id: ATTRequestID(1), central: central, characteristic: temperature)))
        let read = await calls.next { if case .respond(ATTRequestID(1), _) = $0 { true } else { false } }
        #expect(read == .respond(ATTRequestID(1), .success([0x0A, 0x09])))

        // Subscribe: the current value at once, then a change beyond notifyDelta.
        backend.send(.subscribed(central: central, characteristic: temperature, mtu: ATTMTU(clamping: 185)))
        let first = await calls.next { if case .update(_, temperature, _) = $0 { true } else { false } }
        #expect(first == .update([0x0A, 0x09], temperature, accepted: true))
        writeBytes("\(directory.path)/temp", Array("2500\n".utf8))
        let changed = await calls.next { if case .update(_, temperature, _) = $0 { true } else { false } }
        #expect(changed == .update([0xC4, 0x09], temperature, accepted: true))
        let subscriptions = try await call(host, "sensors.subscriptions")
        #expect(subscriptions["centrals"]?[0]?["central"]?.stringValue == central.description)
        #expect(subscriptions["centrals"]?[0]?["mtu"]?.intValue == 185)

        // Flow control: a refused update waits for ready-to-update, then goes out.
        backend.queueHasRoom.withLock { $0 = false }
        writeBytes("\(directory.path)/temp", Array("2600\n".utf8))
        let refused = await calls.next { if case .update(_, temperature, _) = $0 { true } else { false } }
        #expect(refused == .update([0x28, 0x0A], temperature, accepted: false))
        backend.queueHasRoom.withLock { $0 = true }
        backend.send(.readyToUpdate)
        let resent = await calls.next { if case .update(_, temperature, _) = $0 { true } else { false } }
        #expect(resent == .update([0x28, 0x0A], temperature, accepted: true))

        // Config: a valid write (window 600 s, interval 5 s, sensor 0 low 5.0), then version 2 refused with 0x80.
        let configUUID = LocalCharacteristic(
            service: aggregatesService, uuid: configCharacteristic)
        let valid: [UInt8] = [0x01, 0x58, 0x02, 0, 0, 0x05, 0, 0x01, 0, 0, 0, 0xA0, 0x40, 0, 0, 0xC0, 0x7F]
        backend.send(
            .request(
                ATTRequestInfo(
                    id: ATTRequestID(2), central: central, characteristic: configUUID, value: valid,
                    write: .withResponse)))
        let accepted = await calls.next { if case .respond(ATTRequestID(2), _) = $0 { true } else { false } }
        #expect(accepted == .respond(ATTRequestID(2), .success([])))
        backend.send(
            .request(
                ATTRequestInfo(
                    id: ATTRequestID(3), central: central, characteristic: configUUID,
                    value: [0x02] + valid.dropFirst(),
                    write: .withResponse)))
        let refusedWrite = await calls.next { if case .respond(ATTRequestID(3), _) = $0 { true } else { false } }
        #expect(refusedWrite == .respond(ATTRequestID(3), .failure(ATTError(0x80))))
        let readings = try await call(host, "sensors.readings")
        #expect(readings["windowSeconds"]?.intValue == 600, "the valid write applied, the refused one did not")
        #expect(host.events.contains("config"))
        await plugin.stop()
        #expect(stat(socket, &info) != 0, "the socket path is removed at stop")
    }

    @Test("the shipped roles.json's peripheral config starts SensorAggregator with simulated sources only")
    func shippedConfigRuns() async throws {
        let repository = String(#filePath.dropLast("/Tests/AgentCoreTests/SensorAggregatorPluginTests.swift".count))
        let shipped = try AgentConfig.load(from: "\(repository)/roles.json")
        let settings = try #require(shipped.roles[.peripheral])
        #expect(settings.plugin == "SensorAggregator")
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let descriptor = try PluginLoader().load(name: "SensorAggregator", role: .peripheral, from: buildDirectory)
        let host = RecordingPluginHost(namespace: "sensors")
        let plugin = try descriptor.factory(
            RoleContext(
                role: .peripheral, config: settings.config, logger: PluginLogger { _, _ in },
                state: PluginStateStore(directory: directory.path), methods: host, events: host))
        try await plugin.start()
        let readings = try await call(host, "sensors.readings")
        #expect(
            readings["sensors"]?.arrayValue?.compactMap { $0["kind"]?.stringValue } == [
                "temperature", "humidity", "pressure", "battery",
            ])
        #expect(readings["sensors"]?[0]?["count"]?.intValue == 1, "polled once at start")
        await plugin.stop()
    }

    @Test("aggregates survive a restart (flushed to the plugin's state directory)")
    func restartKeepsAggregates() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        mkdir("\(directory.path)/state", 0o700)
        writeBytes("\(directory.path)/temp", Array("2314\n".utf8))
        do {
            let (manager, backend) = await FakePeripheralBackend.poweredOn()
            var calls = backend.calls.makeAsyncIterator()
            let host = RecordingPluginHost(namespace: "sensors")
            let plugin = try await startPlugin(directory.path, manager: manager, host: host)
            sendDatagram("\(directory.path)/ingest.sock", #"{"sensor": "baro", "value": 101317}"#)
            // Once the advertisement carries the pressure (BTHome object 0x04, a uint24 of pascals; a lone 0x04
            // byte could be part of another value), the line has been recorded.
            let pascals = UInt32(101_317)
            let pressure: [UInt8] = [0x04, UInt8(pascals & 0xFF), UInt8(pascals >> 8 & 0xFF), UInt8(pascals >> 16)]
            _ = await calls.next {
                if case .registerAdvertisement(let data, _) = $0 {
                    return data.serviceData[bthome].map { $0.contains(pressure) } == true
                }
                return false
            }
            await plugin.stop()
        }
        let (manager, _) = await FakePeripheralBackend.poweredOn()
        let host = RecordingPluginHost(namespace: "sensors")
        let plugin = try await startPlugin(directory.path, manager: manager, host: host)
        let readings = try await call(host, "sensors.readings")
        let baro = readings["sensors"]?[2]
        #expect(baro?["id"]?.stringValue == "baro")
        #expect(baro?["count"]?.intValue == 1, "the ingest reading came back from aggregates.json")
        #expect(baro?["last"]?.doubleValue == 101317)
        await plugin.stop()
    }
}

struct Fail: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Sends `text` as one datagram to the Unix socket at `path`.
func sendDatagram(_ path: String, _ text: String) {
    let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        for (i, byte) in path.utf8.enumerated() { raw[i] = byte }
    }
    let bytes = Array(text.utf8)
    _ = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            sendto(fd, bytes, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
    }
}
