/// The fixture's heart-rate device's GATT objects, by bluetoothd's handle-named paths (GAP and
/// GATT take handles 1-9 and are not exported; the scenario's services start at 0x000a).
enum HRM {
    static let heartRate = Air.hrm + "/service000a"
    static let measurement = heartRate + "/char000b"
    static let measurementCCCD = measurement + "/desc000d"
    static let bodySensorLocation = heartRate + "/char000e"
    static let battery = Air.hrm + "/service0010"
    static let batteryLevel = battery + "/char0011"
    static let custom = Air.hrm + "/service0014"
    static let longNote = custom + "/char0015"
    static let longNoteDescription = longNote + "/desc0018"
    static let command = custom + "/char0019"
    static let writeOnly = custom + "/char001b"
    static let address = "C0:00:00:00:00:0C"
    static let longText =
        "The quick brown fox jumps over the lazy dog, then over the fence, then far away into the hills."
}
