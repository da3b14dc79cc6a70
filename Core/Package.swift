// swift-tools-version:6.2
// The shared core of bleagent: everything the agent, the simulator and the
// role plugins have in common. It is one dynamic library (`BLECore`), consumed
// by product from a local path package, so that the agent and every plugin
// link the same copy (docs/ARCHITECTURE.md: the one-copy rule).
import PackageDescription

// No module of the core imports Swift's string-processing library implicitly: none uses Regex, and linking it
// maps libswift_StringProcessing and libswift_RegexParser (0.8 MiB resident) into every agent and plugin.
let strict: [SwiftSetting] = [
    .treatAllWarnings(as: .error),
    .unsafeFlags(["-Xfrontend", "-disable-implicit-string-processing-module-import"]),
]

let package = Package(
    name: "BLECore",
    products: [
        .library(
            name: "BLECore", type: .dynamic,
            targets: [
                "IO", "JSON", "DBus", "GATT", "BLE", "RoleKit", "PaymentTerminalProfile", "VirtualPaymentTerminal",
                "BlueZ",
            ])
    ],
    targets: [
        .systemLibrary(
            name: "CDBus", pkgConfig: "dbus-1",
            providers: [.apt(["libdbus-1-dev"])]),
        .systemLibrary(
            name: "CJSONC", pkgConfig: "json-c",
            providers: [.apt(["libjson-c-dev"])]),
        // epoll, signalfd, eventfd, pidfd and fork/exec declarations the Glibc module does not import.
        .systemLibrary(name: "CLinux"),
        // One event loop (epoll), a blocking pool, FileDescriptor and SystemError: the I/O everything else uses.
        .target(name: "IO", dependencies: ["CLinux"], swiftSettings: strict),
        .target(name: "JSON", dependencies: ["CJSONC"], swiftSettings: strict),
        .target(name: "DBus", dependencies: ["CDBus", "CLinux", "IO"], swiftSettings: strict),
        .target(name: "GATT", swiftSettings: strict),
        // The BLE API plugins program against: CentralManager, Peripheral, PeripheralManager.
        .target(name: "BLE", dependencies: ["GATT", "JSON", "IO"], swiftSettings: strict),
        // What a role plugin sees: RolePlugin, RoleContext, PluginDescriptor, the ABI version.
        .target(name: "RoleKit", dependencies: ["JSON", "GATT", "BLE", "IO"], swiftSettings: strict),
        // The Payment Terminal profile's UUIDs, codecs and GATT model (docs/profiles/payment-terminal.md),
        // shared by the scanner plugin, the virtual terminal and the simulator.
        .target(name: "PaymentTerminalProfile", dependencies: ["GATT"], swiftSettings: strict),
        // The virtual terminal's pure logic: idempotency, rules, latency, charge ledger, JSON config.
        .target(
            name: "VirtualPaymentTerminal", dependencies: ["PaymentTerminalProfile", "JSON"], swiftSettings: strict),
        // The BLE API's backends over BlueZ's D-Bus API (central and peripheral).
        .target(name: "BlueZ", dependencies: ["DBus", "BLE", "GATT", "IO"], swiftSettings: strict),
        // The BLE layer's internal state machines, tested through @testable import (they are not public API).
        .testTarget(name: "BLEInternalsTests", dependencies: ["BLE", "GATT"], swiftSettings: strict),
        // The JSON module's compact writer checked against json-c's own output (@testable: json-c is internal).
        .testTarget(name: "JSONInternalsTests", dependencies: ["JSON"], swiftSettings: strict),
    ]
)
