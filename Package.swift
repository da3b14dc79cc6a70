// swift-tools-version:6.2
import PackageDescription

let strict: [SwiftSetting] = [.treatAllWarnings(as: .error)]
let core: Target.Dependency = .product(name: "BLECore", package: "Core")

let package = Package(
    name: "bleagent",
    products: [
        .executable(name: "blesim", targets: ["blesim"])
    ],
    dependencies: [.package(path: "Core")],
    targets: [
        // blesim: pure simulation logic (no I/O) and the executable serving org.bluez.
        .target(name: "SimCore", dependencies: [core], swiftSettings: strict),
        .executableTarget(name: "blesim", dependencies: ["SimCore", core], swiftSettings: strict),
        .testTarget(name: "JSONTests", dependencies: [core], swiftSettings: strict),
        .testTarget(name: "DBusTests", dependencies: [core], swiftSettings: strict),
        .testTarget(name: "GATTTests", dependencies: [core], swiftSettings: strict),
        .testTarget(
            name: "SimCoreTests", dependencies: ["SimCore", core], exclude: ["Fixtures"], swiftSettings: strict),
        .testTarget(name: "BlesimTests", dependencies: [core], exclude: ["Fixtures"], swiftSettings: strict),
    ]
)
