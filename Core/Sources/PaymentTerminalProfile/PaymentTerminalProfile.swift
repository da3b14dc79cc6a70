import GATT

/// The Payment Terminal profile (docs/profiles/payment-terminal.md): its
/// UUIDs, limits, application error codes and GATT service model. The
/// scanner, the virtual terminal and the simulator all use this one copy.
public enum PaymentTerminalProfile {
    /// The version byte every value of this profile starts with.
    public static let formatVersion: UInt8 = 1

    /// The UUID of index `index`: `ad58XXXX-3600-4cd1-87f0-6e799e31fc68` with
    /// XXXX = `index` (the profile's base was generated at random once; its
    /// bits 16-31 hold the index, the way vendor profiles usually derive
    /// their characteristic UUIDs).
    public static func uuid(index: UInt16) -> BluetoothUUID {
        BluetoothUUID(high: 0xAD58_0000_3600_4CD1 | UInt64(index) << 32, low: 0x87F0_6E79_9E31_FC68)
    }

    /// The Payment Terminal Service (index 0x0001).
    public static let serviceUUID = uuid(index: 0x0001)
    /// Terminal Info: read (index 0x0002).
    public static let terminalInfoUUID = uuid(index: 0x0002)
    /// Payment Request: write with response, long writes (index 0x0003).
    public static let paymentRequestUUID = uuid(index: 0x0003)
    /// Transaction Status: indicate (index 0x0004).
    public static let transactionStatusUUID = uuid(index: 0x0004)
    /// Status Query: write with response (index 0x0005).
    public static let statusQueryUUID = uuid(index: 0x0005)

    /// The smallest ATT_MTU at which a Transaction Status indication
    /// (25 bytes) travels whole: 25 + 3. Centrals refuse terminals whose link
    /// negotiates less; terminals never indicate on such a link.
    public static let minimumATTMTU = TransactionStatus.size + 3

    /// The service as a GATT model, for a peripheral to publish (the virtual
    /// terminal, blesim). Values are produced on each read (`value` is nil).
    /// The Client Characteristic Configuration descriptor of Transaction
    /// Status is added by the GATT server (BlueZ adds it for every
    /// notify/indicate characteristic), so it is not listed here.
    public static let serviceDefinition = GATTService(
        uuid: serviceUUID, isPrimary: true,
        characteristics: [
            GATTCharacteristic(
                uuid: terminalInfoUUID, properties: [.read], descriptors: [userDescription("Terminal Info")]),
            GATTCharacteristic(
                uuid: paymentRequestUUID, properties: [.write], descriptors: [userDescription("Payment Request")]),
            GATTCharacteristic(
                uuid: transactionStatusUUID, properties: [.indicate],
                descriptors: [userDescription("Transaction Status")]),
            GATTCharacteristic(
                uuid: statusQueryUUID, properties: [.write, .writeWithoutResponse],
                descriptors: [userDescription("Status Query")]),
        ])

    /// Device Information (0x180A) with the terminal's manufacturer, model,
    /// serial number (the terminal id) and firmware revision, as fixed values.
    public static func deviceInformationService(for info: TerminalInfo) -> GATTService {
        let fields: [(BluetoothUUID, String)] = [
            (.manufacturerNameString, info.vendor), (.modelNumberString, info.model),
            (.serialNumberString, info.terminalID), (.firmwareRevisionString, info.firmware),
        ]
        return GATTService(
            uuid: .deviceInformation,
            characteristics: fields.map { GATTCharacteristic(uuid: $0.0, properties: [.read], value: Array($0.1.utf8)) }
        )
    }

    /// Battery (0x180F): Battery Level (0x2A19, read and notify, one byte
    /// 0 ... 100), produced on each read.
    public static let batteryService = GATTService(
        uuid: .battery, characteristics: [GATTCharacteristic(uuid: .batteryLevel, properties: [.read, .notify])])

    /// Everything a terminal serves: this service, Device Information, Battery.
    public static func services(for info: TerminalInfo) -> [GATTService] {
        [serviceDefinition, deviceInformationService(for: info), batteryService]
    }

    /// Decodes a Battery Level value (one byte, 0 ... 100).
    public static func decodeBatteryLevel(_ bytes: [UInt8]) throws(PaymentTerminalValueError) -> UInt8 {
        guard bytes.count == 1, bytes[0] <= 100 else {
            throw PaymentTerminalValueError(field: "batteryLevel", "must be one byte from 0 to 100")
        }
        return bytes[0]
    }

    private static func userDescription(_ text: String) -> GATTDescriptor {
        GATTDescriptor(uuid: .characteristicUserDescription, value: Array(text.utf8))
    }
}

/// The ATT application errors (0x80 ... 0x9F) a terminal answers a Payment
/// Request or Status Query write with.
public enum PaymentTerminalATTError {
    /// 0x80: the version byte is not supported.
    public static let unsupportedVersion = ATTError(0x80)
    /// 0x81: the value is malformed (truncated, oversized, a bad field).
    public static let malformedValue = ATTError(0x81)
    /// 0x82: the transaction id is already used by a different request (same
    /// id, other amount, currency or reference). Nothing was charged for it.
    public static let idempotencyConflict = ATTError(0x82)
    /// 0x83: the terminal cannot take a request now (busy with another
    /// transaction); retry later with the same id.
    public static let busy = ATTError(0x83)

    /// The error a terminal answers a decoding failure with.
    public static func forDecodingError(_ error: PaymentTerminalDecodingError) -> ATTError {
        if case .unsupportedVersion = error { return unsupportedVersion }
        return malformedValue
    }
}
