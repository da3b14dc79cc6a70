// SIG-assigned UUIDs the project uses, with their names from the Bluetooth
// Assigned Numbers document. Add a constant and its name together.

extension BluetoothUUID {
    // MARK: GATT declarations (Core spec Vol 3 Part G 3)

    /// Primary Service declaration, 0x2800.
    public static let primaryServiceDeclaration = BluetoothUUID(uuid16: 0x2800)
    /// Secondary Service declaration, 0x2801.
    public static let secondaryServiceDeclaration = BluetoothUUID(uuid16: 0x2801)
    /// Include declaration, 0x2802.
    public static let includeDeclaration = BluetoothUUID(uuid16: 0x2802)
    /// Characteristic declaration, 0x2803.
    public static let characteristicDeclaration = BluetoothUUID(uuid16: 0x2803)

    // MARK: Services

    /// Generic Access service, 0x1800.
    public static let genericAccess = BluetoothUUID(uuid16: 0x1800)
    /// Generic Attribute service, 0x1801.
    public static let genericAttribute = BluetoothUUID(uuid16: 0x1801)
    /// Device Information service, 0x180A.
    public static let deviceInformation = BluetoothUUID(uuid16: 0x180A)
    /// Heart Rate service, 0x180D.
    public static let heartRate = BluetoothUUID(uuid16: 0x180D)
    /// Battery service, 0x180F.
    public static let battery = BluetoothUUID(uuid16: 0x180F)
    /// Blood Pressure service, 0x1810.
    public static let bloodPressure = BluetoothUUID(uuid16: 0x1810)
    /// Environmental Sensing service, 0x181A.
    public static let environmentalSensing = BluetoothUUID(uuid16: 0x181A)
    /// BTHome, 0xFCD2: a 16-bit member UUID (Allterco Robotics) used as the key
    /// of BTHome service data in advertisements, not as a GATT service.
    public static let bthome = BluetoothUUID(uuid16: 0xFCD2)

    // MARK: Characteristics

    /// Device Name characteristic, 0x2A00.
    public static let deviceName = BluetoothUUID(uuid16: 0x2A00)
    /// Appearance characteristic, 0x2A01.
    public static let appearance = BluetoothUUID(uuid16: 0x2A01)
    /// Service Changed characteristic, 0x2A05.
    public static let serviceChanged = BluetoothUUID(uuid16: 0x2A05)
    /// Battery Level characteristic, 0x2A19.
    public static let batteryLevel = BluetoothUUID(uuid16: 0x2A19)
    /// System ID characteristic, 0x2A23.
    public static let systemID = BluetoothUUID(uuid16: 0x2A23)
    /// Model Number String characteristic, 0x2A24.
    public static let modelNumberString = BluetoothUUID(uuid16: 0x2A24)
    /// Serial Number String characteristic, 0x2A25.
    public static let serialNumberString = BluetoothUUID(uuid16: 0x2A25)
    /// Firmware Revision String characteristic, 0x2A26.
    public static let firmwareRevisionString = BluetoothUUID(uuid16: 0x2A26)
    /// Hardware Revision String characteristic, 0x2A27.
    public static let hardwareRevisionString = BluetoothUUID(uuid16: 0x2A27)
    /// Software Revision String characteristic, 0x2A28.
    public static let softwareRevisionString = BluetoothUUID(uuid16: 0x2A28)
    /// Manufacturer Name String characteristic, 0x2A29.
    public static let manufacturerNameString = BluetoothUUID(uuid16: 0x2A29)
    /// Blood Pressure Measurement characteristic, 0x2A35.
    public static let bloodPressureMeasurement = BluetoothUUID(uuid16: 0x2A35)
    /// Heart Rate Measurement characteristic, 0x2A37.
    public static let heartRateMeasurement = BluetoothUUID(uuid16: 0x2A37)
    /// Body Sensor Location characteristic, 0x2A38.
    public static let bodySensorLocation = BluetoothUUID(uuid16: 0x2A38)
    /// Heart Rate Control Point characteristic, 0x2A39.
    public static let heartRateControlPoint = BluetoothUUID(uuid16: 0x2A39)
    /// Pressure characteristic, 0x2A6D.
    public static let pressure = BluetoothUUID(uuid16: 0x2A6D)
    /// Temperature characteristic, 0x2A6E.
    public static let temperature = BluetoothUUID(uuid16: 0x2A6E)
    /// Humidity characteristic, 0x2A6F.
    public static let humidity = BluetoothUUID(uuid16: 0x2A6F)

    // MARK: Descriptors

    /// Characteristic Extended Properties descriptor, 0x2900.
    public static let characteristicExtendedProperties = BluetoothUUID(uuid16: 0x2900)
    /// Characteristic User Description descriptor, 0x2901.
    public static let characteristicUserDescription = BluetoothUUID(uuid16: 0x2901)
    /// Client Characteristic Configuration descriptor (CCCD), 0x2902.
    public static let clientCharacteristicConfiguration = BluetoothUUID(uuid16: 0x2902)
    /// Server Characteristic Configuration descriptor, 0x2903.
    public static let serverCharacteristicConfiguration = BluetoothUUID(uuid16: 0x2903)
    /// Characteristic Presentation Format descriptor, 0x2904.
    public static let characteristicPresentationFormat = BluetoothUUID(uuid16: 0x2904)
    /// Environmental Sensing Measurement descriptor, 0x290C.
    public static let environmentalSensingMeasurement = BluetoothUUID(uuid16: 0x290C)
    /// Environmental Sensing Trigger Setting descriptor, 0x290D.
    public static let environmentalSensingTriggerSetting = BluetoothUUID(uuid16: 0x290D)

    /// The Assigned Numbers name of a UUID the project knows ("Heart Rate",
    /// "Client Characteristic Configuration"), or nil.
    public var name: String? {
        guard let short = uuid16 else { return nil }
        return Self.assignedNames[short]
    }

    private static let assignedNames: [UInt16: String] = [
        0x2800: "Primary Service",
        0x2801: "Secondary Service",
        0x2802: "Include",
        0x2803: "Characteristic",
        0x1800: "Generic Access",
        0x1801: "Generic Attribute",
        0x180A: "Device Information",
        0x180D: "Heart Rate",
        0x180F: "Battery",
        0x1810: "Blood Pressure",
        0x181A: "Environmental Sensing",
        0xFCD2: "BTHome",
        0x2A00: "Device Name",
        0x2A01: "Appearance",
        0x2A05: "Service Changed",
        0x2A19: "Battery Level",
        0x2A23: "System ID",
        0x2A24: "Model Number String",
        0x2A25: "Serial Number String",
        0x2A26: "Firmware Revision String",
        0x2A27: "Hardware Revision String",
        0x2A28: "Software Revision String",
        0x2A29: "Manufacturer Name String",
        0x2A35: "Blood Pressure Measurement",
        0x2A37: "Heart Rate Measurement",
        0x2A38: "Body Sensor Location",
        0x2A39: "Heart Rate Control Point",
        0x2A6D: "Pressure",
        0x2A6E: "Temperature",
        0x2A6F: "Humidity",
        0x2900: "Characteristic Extended Properties",
        0x2901: "Characteristic User Description",
        0x2902: "Client Characteristic Configuration",
        0x2903: "Server Characteristic Configuration",
        0x2904: "Characteristic Presentation Format",
        0x290C: "Environmental Sensing Measurement",
        0x290D: "Environmental Sensing Trigger Setting",
    ]
}
