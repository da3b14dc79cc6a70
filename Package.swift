// swift-tools-version:6.2
import PackageDescription

let strict: [SwiftSetting] = [.treatAllWarnings(as: .error)]
let core: Target.Dependency = .product(name: "BLECore", package: "Core")

let package = Package(
    name: "bleagent",
    dependencies: [.package(path: "Core")],
    targets: [
        // signalfd and eventfd, which the Glibc module does not import.
        .systemLibrary(name: "CLinux"),
        // The control API's wire types, shared by the agent and blectl.
        .target(name: "ControlProtocol", dependencies: [core], swiftSettings: strict),
        // The agent apart from its entry point: config, control server, sd_notify, signals.
        .target(name: "AgentCore", dependencies: [core, "ControlProtocol", "CLinux"], swiftSettings: strict),
        .executableTarget(name: "bleagent", dependencies: [core, "AgentCore"], swiftSettings: strict),
        .executableTarget(name: "blectl", dependencies: [core, "ControlProtocol"], swiftSettings: strict),
        .testTarget(name: "JSONTests", dependencies: [core], swiftSettings: strict),
        .testTarget(name: "DBusTests", dependencies: [core], swiftSettings: strict),
        .testTarget(name: "GATTTests", dependencies: [core], swiftSettings: strict),
        .testTarget(
            name: "AgentCoreTests", dependencies: [core, "AgentCore", "ControlProtocol"],
            exclude: ["Fixtures"], swiftSettings: strict),
        .testTarget(
            name: "BlectlTests", dependencies: [core, "ControlProtocol", "bleagent", "blectl"],
            swiftSettings: strict),
    ]
)
