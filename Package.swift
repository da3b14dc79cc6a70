// swift-tools-version:6.2
import PackageDescription

let strict: [SwiftSetting] = [.treatAllWarnings(as: .error)]
let core: Target.Dependency = .product(name: "BLECore", package: "Core")

let package = Package(
    name: "bleagent",
    dependencies: [.package(path: "Core")],
    targets: [
        .testTarget(name: "JSONTests", dependencies: [core], swiftSettings: strict),
        .testTarget(name: "DBusTests", dependencies: [core], swiftSettings: strict),
        .testTarget(name: "GATTTests", dependencies: [core], swiftSettings: strict),
        .testTarget(name: "BLETests", dependencies: [core], swiftSettings: strict),
    ]
)
