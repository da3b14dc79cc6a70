// swift-tools-version:6.2
import PackageDescription

let strict: [SwiftSetting] = [.treatAllWarnings(as: .error)]
// What the agent process loads (its own modules and the plugins) does not import Swift's string-processing
// library implicitly: none of it uses Regex, and linking it maps libswift_StringProcessing and
// libswift_RegexParser (0.8 MiB resident) into every agent. The tools (blesim, blectl, benchmarks) keep it.
let lean: [SwiftSetting] = strict + [.unsafeFlags(["-Xfrontend", "-disable-implicit-string-processing-module-import"])]
let core: Target.Dependency = .product(name: "BLECore", package: "Core")

let package = Package(
    name: "bleagent",
    products: [
        // Role plugins: each a shared library the agent loads from its plugin
        // directory (docs/plugins.md), linking the core by product only.
        .library(name: "Diagnostics", type: .dynamic, targets: ["Diagnostics"]),
        .library(name: "PaymentTerminalScanner", type: .dynamic, targets: ["PaymentTerminalScannerEntry"]),
        .library(name: "SensorAggregator", type: .dynamic, targets: ["SensorAggregatorEntry"]),
        .library(name: "VirtualPaymentTerminal", type: .dynamic, targets: ["VirtualTerminalPlugin"]),
        .library(name: "SensorGateway", type: .dynamic, targets: ["SensorGatewayEntry"]),
        .library(name: "Bench", type: .dynamic, targets: ["Bench"]),
        // Test fixtures for the plugin loader, built beside the real plugins.
        .library(name: "WrongABIPlugin", type: .dynamic, targets: ["WrongABIPlugin"]),
        .library(name: "PeripheralOnlyPlugin", type: .dynamic, targets: ["PeripheralOnlyPlugin"]),
        .library(name: "NoEntryPointPlugin", type: .dynamic, targets: ["NoEntryPointPlugin"]),
        .library(name: "OneCopyProbe", type: .dynamic, targets: ["OneCopyProbe"]),
        .library(name: "StuckPlugin", type: .dynamic, targets: ["StuckPlugin"]),
        .executable(name: "blesim", targets: ["blesim"]),
        .executable(name: "blebench", targets: ["blebench"]),
        // The test kit plugin authors import: fake and scripted backends, a manual clock, a private bus with
        // blesim and processes (docs/plugins.md, "Testing a plugin"). It links the core by product, like a plugin.
        .library(name: "BLETesting", targets: ["BLETesting"]),
    ],
    dependencies: [.package(path: "Core")],
    targets: [
        // Debian's libcrypto (libssl-dev) for AES-CCM, the cipher of encrypted BTHome advertisements.
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        // AES-CCM over CCrypto and the framing of encrypted BTHome v2 data: the sensor gateway decrypts it,
        // blesim's simulated sensors encrypt it.
        .target(name: "BTHomeCrypto", dependencies: ["CCrypto"], swiftSettings: lean),
        // libmosquitto: the MQTT client of the fleet layer (docs/fleet.md), loaded at run time only
        // by an agent with a fleet section (Debian libmosquitto-dev for the header).
        .target(name: "CMosquitto"),
        // The control API's wire types, shared by the agent and blectl.
        .target(name: "ControlProtocol", dependencies: [core], swiftSettings: lean),
        // The agent apart from its entry point: config, control server, sd_notify, signals.
        .target(name: "AgentCore", dependencies: [core, "ControlProtocol"], swiftSettings: lean),
        // The agent on an MQTT broker: status, events, the durable outbox, RPC, config push, Home Assistant.
        .target(
            name: "Fleet", dependencies: [core, "AgentCore", "ControlProtocol", "CMosquitto"], swiftSettings: lean),
        .executableTarget(name: "bleagent", dependencies: [core, "AgentCore", "Fleet"], swiftSettings: lean),
        // A peripheral on BlueZ for the VM payloads (Tests/VM/peripheral-*.sh).
        .executableTarget(
            name: "bleprobe-peripheral", dependencies: [core], path: "Tests/VM/bleprobe-peripheral",
            swiftSettings: strict),
        .executableTarget(name: "blectl", dependencies: [core, "ControlProtocol"], swiftSettings: strict),
        // Drives CentralManager over BlueZ against example-gatt-server in the VM (Tests/VM/central-*.sh).
        .executableTarget(name: "bleprobe-central", dependencies: [core], swiftSettings: strict),
        .target(name: "Diagnostics", dependencies: [core], path: "plugins/Diagnostics", swiftSettings: lean),
        // blebench's plugin (both roles): the agent side of its notification and write rows.
        .target(name: "Bench", dependencies: [core], path: "plugins/Bench", swiftSettings: lean),
        // A virtual payment terminal in the peripheral role (libVirtualPaymentTerminal.so; the module
        // name differs from the core's VirtualPaymentTerminal module it imports).
        .target(
            name: "VirtualTerminalPlugin", dependencies: [core], path: "plugins/VirtualTerminal", swiftSettings: lean),
        // The sensor aggregator: pure logic plus the peripheral plugin shell.
        .target(
            name: "SensorAggregator", dependencies: [core], path: "plugins/SensorAggregator", exclude: ["Entry"],
            swiftSettings: lean),
        .target(
            name: "SensorAggregatorEntry", dependencies: [core, "SensorAggregator"],
            path: "plugins/SensorAggregator/Entry", swiftSettings: lean),
        // The payment-terminal scanner (central role plugin): the pure parts (terminal table, journal,
        // reconciliation, pos.* params) and the shell that drives them over the BLE API.
        .target(
            name: "PaymentTerminalScanner", dependencies: [core], path: "plugins/PaymentTerminalScanner",
            exclude: ["Entry"], swiftSettings: lean),
        .target(
            name: "PaymentTerminalScannerEntry", dependencies: [core, "PaymentTerminalScanner"],
            path: "plugins/PaymentTerminalScanner/Entry", swiftSettings: lean),
        // The sensor gateway (central role plugin): decoders, the device table and its engine, the gateway.*
        // params, and the shell that scans and feeds them.
        .target(
            name: "SensorGateway", dependencies: [core, "BTHomeCrypto"], path: "plugins/SensorGateway",
            exclude: ["Entry"], swiftSettings: lean),
        .target(
            name: "SensorGatewayEntry", dependencies: [core, "SensorGateway"], path: "plugins/SensorGateway/Entry",
            swiftSettings: lean),
        .target(
            name: "WrongABIPlugin", dependencies: [core], path: "Tests/Fixtures/WrongABIPlugin",
            swiftSettings: strict),
        .target(
            name: "PeripheralOnlyPlugin", dependencies: [core], path: "Tests/Fixtures/PeripheralOnlyPlugin",
            swiftSettings: strict),
        .target(
            name: "NoEntryPointPlugin", dependencies: [core], path: "Tests/Fixtures/NoEntryPointPlugin",
            swiftSettings: strict),
        .target(
            name: "OneCopyProbe", dependencies: [core], path: "Tests/Fixtures/OneCopyProbe", swiftSettings: strict),
        .target(
            name: "StuckPlugin", dependencies: [core], path: "Tests/Fixtures/StuckPlugin", swiftSettings: strict),
        // blesim: pure simulation logic (no I/O) and the executable serving org.bluez.
        .target(name: "SimCore", dependencies: [core, "BTHomeCrypto"], swiftSettings: strict),
        .executableTarget(name: "blesim", dependencies: ["SimCore", core], swiftSettings: strict),
        // A benchmark (not a test): advertisement reports/s and notifications/s a D-Bus client gets through blesim.
        .executableTarget(
            name: "blesim-bench", dependencies: [core, "SimCore", "BLETesting"], swiftSettings: strict),
        // A benchmark (not a test): the sensor gateway beside Bleak + bthome-ble on one blesim air (docs/benchmarks.md).
        .executableTarget(
            name: "gateway-bench", dependencies: [core, "SimCore", "SensorGateway", "BTHomeCrypto", "BLETesting"],
            swiftSettings: strict),
        // The benchmark of the agent beside Bleak and bless (docs/benchmarks.md): a program, not a test.
        .executableTarget(name: "blebench", dependencies: [core, "BLETesting"], swiftSettings: strict),
        // Fuzzing (docs/testing.md): the targets, pure functions of bytes; blefuzz, libFuzzer's driver when
        // scripts/fuzz.sh builds it with --sanitize=fuzzer, else a replayer of saved inputs; FuzzTests replays
        // the checked-in corpora and every reproducer in the suite.
        .target(
            name: "FuzzTargets",
            dependencies: [
                core, "AgentCore", "ControlProtocol", "PaymentTerminalScanner", "SensorAggregator",
                "SensorGateway", "BTHomeCrypto", "BLETesting",
            ],
            path: "Tests/Fuzz/Targets", swiftSettings: strict),
        .executableTarget(
            name: "blefuzz", dependencies: ["FuzzTargets"], path: "Tests/Fuzz/blefuzz", swiftSettings: strict),
        .testTarget(name: "FuzzTests", dependencies: ["FuzzTargets"], swiftSettings: strict),
        .target(name: "BLETesting", dependencies: [core], swiftSettings: strict),
        // Connects with DBusConnection.system() and .session() in a process of its own (DBusTests).
        .executableTarget(
            name: "BusAddressProbe", dependencies: [core], path: "Tests/Fixtures/BusAddressProbe", swiftSettings: strict
        ),
        .testTarget(name: "IOTests", dependencies: [core, "BLETesting"], swiftSettings: strict),
        .testTarget(name: "JSONTests", dependencies: [core], swiftSettings: strict),
        .testTarget(name: "DBusTests", dependencies: [core, "BLETesting"], swiftSettings: strict),
        .testTarget(name: "GATTTests", dependencies: [core], swiftSettings: strict),
        .testTarget(name: "BLETests", dependencies: [core, "BLETesting"], swiftSettings: strict),
        .testTarget(name: "BlueZCentralTests", dependencies: [core, "BLETesting"], swiftSettings: strict),
        .testTarget(name: "BlueZPeripheralTests", dependencies: [core, "BLETesting"], swiftSettings: strict),
        .testTarget(
            name: "SensorAggregatorTests", dependencies: [core, "SensorAggregator", "BLETesting"],
            swiftSettings: strict),
        .testTarget(
            name: "DiagnosticsTests", dependencies: [core, "Diagnostics", "BLETesting"], swiftSettings: strict),
        .testTarget(name: "PaymentTerminalProfileTests", dependencies: [core], swiftSettings: strict),
        .testTarget(
            name: "SensorGatewayTests",
            dependencies: [core, "SensorGateway", "BTHomeCrypto", "SimCore", "BLETesting"],
            swiftSettings: strict),
        .testTarget(
            name: "PaymentTerminalScannerTests", dependencies: [core, "PaymentTerminalScanner", "BLETesting"],
            swiftSettings: strict),
        .testTarget(
            name: "AgentCoreTests", dependencies: [core, "AgentCore", "ControlProtocol", "BLETesting"],
            exclude: ["Fixtures"], swiftSettings: strict),
        .testTarget(
            name: "FleetTests", dependencies: [core, "AgentCore", "ControlProtocol", "Fleet", "BLETesting"],
            swiftSettings: strict),
        .testTarget(
            name: "BlectlTests",
            dependencies: [core, "ControlProtocol", "BLETesting", "bleagent", "blectl"],
            exclude: ["Fixtures"], swiftSettings: strict),
        .testTarget(
            name: "SimCoreTests", dependencies: ["SimCore", "BTHomeCrypto", core], exclude: ["Fixtures"],
            swiftSettings: strict),
        .testTarget(
            name: "BlesimTests", dependencies: [core, "BLETesting"], exclude: ["Fixtures"], swiftSettings: strict),
        // Bleak (PyPI) as a central against blesim: runs Tests/Bleak/central.py in .build/venv-bleak.
        .testTarget(name: "BleakTests", dependencies: [core, "BLETesting"], swiftSettings: strict),
    ]
)
