import BLE
import GATT
import JSON
import RoleKit
import SensorGateway
import Synchronization
import Testing

/// The hand-off over MQTT, on the plugin's side: updates mapped to relayed
/// devices and readings with Home Assistant's classes, and departures.
@Suite struct FleetReadingsTests {
    static let clock = GatewayClock(unixOrigin: 1_700_000_000_000)

    /// A fleet that records what it is given.
    final class RecordingFleet: FleetPublisher {
        let published = Mutex<[(FleetDevice, [FleetDeviceReading])]>([])
        let gone = Mutex<[String]>([])
        var isEnabled: Bool { true }
        func publishDurable(_ record: DurableRecord) async throws(DurablePublishError) {}
        func declareSensors(_ sensors: [FleetSensor]) {}
        func publishReading(sensor: String, value: Double, time: Double) {}
        func publishDeviceReadings(_ device: FleetDevice, _ readings: [FleetDeviceReading]) {
            published.withLock { $0.append((device, readings)) }
        }
        func deviceUnavailable(_ device: String) { gone.withLock { $0.append(device) } }
    }

    static func bthome(_ hex: String, name: String? = nil) -> AdvertisementData {
        AdvertisementData(localName: name, serviceData: [.bthome: bytes(hex)])
    }

    @Test("a BTHome update: the device by its address, every state with Home Assistant's classes, ids unique")
    func mapsAnUpdate() throws {
        var engine = GatewayEngine(config: GatewayConfig())
        let address = DeviceAddress("A4:C1:38:00:00:01")!
        // battery 97 %, temperature 22.5 °C, humidity 45.25 %, binary battery low, door open, a button press.
        let advertisement = Self.bthome("40 01 61 02 ca 08 03 ad 11 15 01 1a 01 3a 01", name: "ATC_1")
        let ingested = engine.ingest(
            GatewayReport(address: address, rssi: -60, advertisement: advertisement), at: .seconds(2))
        let update = try #require(ingested)
        let device = FleetReadings.device(update)
        #expect(device.id == "a4c138000001")
        #expect(device.name == "ATC_1" && device.model == "BTHome v2 sensor")
        #expect(device.bluetoothAddress == "A4:C1:38:00:00:01")
        let readings = Dictionary(
            uniqueKeysWithValues: FleetReadings.readings(update, clock: Self.clock).map { ($0.id, $0) })
        #expect(Set(readings.keys) == ["battery", "temperature", "humidity", "battery_binary", "door", "button"])
        let temperature = try #require(readings["temperature"])
        #expect(temperature.value == .number(22.5) && temperature.unit == "°C")
        #expect(temperature.deviceClass == "temperature" && temperature.stateClass == "measurement")
        #expect(temperature.platform == "sensor" && temperature.name == "Temperature")
        #expect(temperature.time == 1_700_000_002)
        #expect(readings["battery"]?.deviceClass == "battery" && readings["battery"]?.unit == "%")
        let low = try #require(readings["battery_binary"])
        #expect(low.platform == "binary_sensor" && low.deviceClass == "battery" && low.value == .flag(true))
        #expect(low.unit == nil && low.stateClass == nil)
        #expect(readings["door"]?.deviceClass == "door")
        let button = try #require(readings["button"])
        #expect(button.platform == "event" && button.value == .event(type: "press"))
        #expect(button.deviceClass == "button" && button.eventTypes.contains("long_press"))
        #expect(readings.values.allSatisfy { FleetDevice.isTopicLevel($0.id) })
    }

    @Test("classes: counters are total_increasing, ids and texts have no state class, others measure")
    func classes() {
        func reading(_ name: String, _ value: ReadingValue, unit: String? = nil) -> FleetDeviceReading {
            let update = ReadingUpdate(
                address: DeviceAddress(value: 1), name: nil, kind: .eddystone, rssi: nil, readings: [],
                states: [StoredReading(reading: Reading(name: name, value: value, unit: unit), at: .zero)],
                firmware: nil, at: .zero)
            return FleetReadings.readings(update, clock: Self.clock)[0]
        }
        #expect(reading("energy", .number(1), unit: "kWh").stateClass == "total_increasing")
        #expect(reading("dew_point", .number(1), unit: "°C").deviceClass == "temperature")
        #expect(reading("major", .number(1)).stateClass == nil)
        #expect(reading("url", .text("https://x")).stateClass == nil)
        #expect(reading("url", .text("https://x")).value == .text("https://x"))
        #expect(reading("tx_power", .number(-20), unit: "dBm").deviceClass == "signal_strength")
        #expect(reading("uv_index", .number(3)).deviceClass == nil)
        #expect(reading("uv_index", .number(3)).stateClass == "measurement")
        #expect(reading("temperature_2", .number(3), unit: "°C").deviceClass == "temperature")
        #expect(reading("temperature_2", .number(3), unit: "°C").name == "Temperature 2")
    }

    @Test("the sink hands updates to the fleet and says when a device is evicted or expires")
    func departures() throws {
        let fleet = RecordingFleet()
        let sink = FleetReadingSink(fleet: fleet)
        var config = GatewayConfig()
        config.maxDevices = 2
        config.expirySeconds = 60
        var engine = GatewayEngine(config: config)
        for (index, second) in [(1, 1), (2, 2), (3, 3)] {
            let address = DeviceAddress(value: UInt64(index))
            let report = GatewayReport(address: address, rssi: -60, advertisement: Self.bthome("40 02 ca 08"))
            if let update = engine.ingest(report, at: .seconds(second)) { sink.publish(update, clock: Self.clock) }
            for gone in engine.takeDepartures() { sink.departed(gone) }
        }
        #expect(fleet.published.withLock { $0.map(\.0.id) } == ["000000000001", "000000000002", "000000000003"])
        #expect(fleet.gone.withLock { $0 } == ["000000000001"], "the least recently heard, evicted")
        _ = engine.tick(at: .seconds(70))
        for gone in engine.takeDepartures() { sink.departed(gone) }
        #expect(fleet.gone.withLock { $0 } == ["000000000001", "000000000002", "000000000003"])
        #expect(engine.takeDepartures() == [])
    }
}
