import RoleKit

extension SensorConfig {
    /// The sensor as the fleet publishes it and Home Assistant shows it:
    /// the standard kinds with Home Assistant's device class and unit
    /// spelling (`°C`, not `degC`), generic sensors with their own unit.
    var fleetSensor: FleetSensor {
        switch kind {
        case .temperature: FleetSensor(id: id, name: id, deviceClass: "temperature", unit: "°C")
        case .humidity: FleetSensor(id: id, name: id, deviceClass: "humidity", unit: "%")
        case .pressure: FleetSensor(id: id, name: id, deviceClass: "pressure", unit: "Pa")
        case .battery: FleetSensor(id: id, name: id, deviceClass: "battery", unit: "%")
        case .generic: FleetSensor(id: id, name: id, deviceClass: nil, unit: unit.isEmpty ? nil : unit)
        }
    }
}
