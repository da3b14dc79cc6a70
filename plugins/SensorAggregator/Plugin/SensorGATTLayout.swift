import BLE
import GATT

/// The services the sensor aggregator publishes for a config
/// (docs/profiles/sensor-aggregator.md, "GATT layout"): ESS with the 290C
/// descriptor per standard kind present, Battery, Device Information (the
/// strings given) and the custom Aggregates service.
public enum SensorGATTLayout {
    /// The services, in publishing order.
    public static func services(for config: SensorAggregatorConfig) -> [GATTService] {
        var services: [GATTService] = []
        let ess: [GATTCharacteristic] = [SensorKind.temperature, .humidity, .pressure].compactMap { kind in
            guard let sensor = config.primarySensor(of: kind),
                let uuid = SensorAggregatorProfile.essCharacteristic(for: kind)
            else { return nil }
            let descriptor = SensorAggregatorProfile.measurementDescriptor(
                kind: kind, pollSeconds: sensor.source.pollSeconds)
            return GATTCharacteristic(
                uuid: uuid, properties: [.read, .notify],
                descriptors: descriptor.map {
                    [GATTDescriptor(uuid: .environmentalSensingMeasurement, value: $0.bytes)]
                }
                    ?? [])
        }
        if !ess.isEmpty { services.append(GATTService(uuid: .environmentalSensing, characteristics: ess)) }
        if config.primarySensor(of: .battery) != nil {
            services.append(
                GATTService(
                    uuid: .battery,
                    characteristics: [GATTCharacteristic(uuid: .batteryLevel, properties: [.read, .notify])]))
        }
        let strings = deviceInformation(config.deviceInformation)
        if !strings.isEmpty {
            services.append(
                GATTService(
                    uuid: .deviceInformation,
                    characteristics: strings.map {
                        GATTCharacteristic(uuid: $0.uuid, properties: [.read], value: Array($0.value.utf8))
                    }))
        }
        services.append(
            GATTService(
                uuid: SensorAggregatorProfile.aggregatesService,
                characteristics: [
                    GATTCharacteristic(
                        uuid: SensorAggregatorProfile.summaryCharacteristic, properties: [.read, .notify]),
                    GATTCharacteristic(
                        uuid: SensorAggregatorProfile.configCharacteristic, properties: [.read, .write]),
                ]))
        return services
    }

    /// The Device Information strings present, by characteristic.
    public static func deviceInformation(_ info: DeviceInformation) -> [(uuid: BluetoothUUID, value: String)] {
        let all: [(BluetoothUUID, String?)] = [
            (.manufacturerNameString, info.manufacturer), (.modelNumberString, info.model),
            (.serialNumberString, info.serial), (.hardwareRevisionString, info.hardwareRevision),
            (.firmwareRevisionString, info.firmwareRevision), (.softwareRevisionString, info.softwareRevision),
        ]
        return all.compactMap { uuid, value in value.map { (uuid, $0) } }
    }

    /// The local characteristic (service and UUID) that carries `uuid` in `services`.
    public static func localCharacteristic(_ uuid: BluetoothUUID, in services: [GATTService]) -> LocalCharacteristic? {
        services.first { $0.characteristic(uuid) != nil }.map { LocalCharacteristic(service: $0.uuid, uuid: uuid) }
    }
}
