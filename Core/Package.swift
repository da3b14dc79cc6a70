// swift-tools-version:6.2
// The shared core of bleagent: everything the agent, the simulator and the
// role plugins have in common. It is one dynamic library (`BLECore`), consumed
// by product from a local path package, so that the agent and every plugin
// link the same copy (docs/ARCHITECTURE.md: the one-copy rule).
import PackageDescription

let strict: [SwiftSetting] = [.treatAllWarnings(as: .error)]

let package = Package(
    name: "BLECore",
    products: [
        .library(name: "BLECore", type: .dynamic, targets: ["JSON", "DBus", "GATT", "BLE", "RoleKit", "BlueZ"])
    ],
    targets: [
        .systemLibrary(
            name: "CDBus", pkgConfig: "dbus-1",
            providers: [.apt(["libdbus-1-dev"])]),
        .systemLibrary(
            name: "CJSONC", pkgConfig: "json-c",
            providers: [.apt(["libjson-c-dev"])]),
        .target(name: "JSON", dependencies: ["CJSONC"], swiftSettings: strict),
        .target(name: "DBus", dependencies: ["CDBus"], swiftSettings: strict),
        .target(name: "GATT", swiftSettings: strict),
        // The BLE API plugins program against: CentralManager, Peripheral, PeripheralManager.
        .target(name: "BLE", dependencies: ["GATT", "JSON"], swiftSettings: strict),
        // What a role plugin sees: RolePlugin, RoleContext, PluginDescriptor, the ABI version.
        .target(name: "RoleKit", dependencies: ["JSON", "GATT"], swiftSettings: strict),
        // The BLE backends over bluetoothd's D-Bus API (BlueZ 5.66).
        .target(name: "BlueZ", dependencies: ["DBus", "BLE", "GATT"], swiftSettings: strict),
    ]
)
