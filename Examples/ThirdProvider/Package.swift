// swift-tools-version:6.1
import PackageDescription

// A package outside the lab that adds a crypto provider on Botan 2 (Debian's libbotan-2-dev),
// a reporter, and a flow with the protocol `lab serve` serves it with, and builds its own
// `lab` with them: `swift run third-lab list`.
// docs/architecture.md, "A plugin outside the repository", walks through it.
let swiftSettings: [SwiftSetting] = [.enableUpcomingFeature("ExistentialAny")]

let package = Package(
    name: "ThirdProvider",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "third-lab", targets: ["ThirdLab"]),
        .library(name: "LabBotan", targets: ["LabBotan"]),
    ],
    dependencies: [
        // By path here; by version (`from:`) in a package of your own.
        .package(name: "crypto-lab", path: "../.."),
    ],
    targets: [
        .systemLibrary(name: "CBotan", pkgConfig: "botan-2", providers: [.apt(["libbotan-2-dev"])]),
        .target(
            name: "LabBotan",
            dependencies: ["CBotan", .product(name: "LabKit", package: "crypto-lab")],
            swiftSettings: swiftSettings
        ),
        // A flow and the protocol `lab serve` serves it with (derive/1), beside cx/1 and msg/1.
        .target(
            name: "LabDerive",
            dependencies: [.product(name: "LabKit", package: "crypto-lab")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "LabOpenMetrics",
            dependencies: [.product(name: "LabKit", package: "crypto-lab")],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "ThirdLab",
            dependencies: [
                "LabBotan", "LabDerive", "LabOpenMetrics",
                .product(name: "LabCLI", package: "crypto-lab"),
                .product(name: "LabKit", package: "crypto-lab"),
                .product(name: "LabBuiltIns", package: "crypto-lab"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LabBotanTests",
            dependencies: [
                "LabBotan", "LabOpenMetrics",
                .product(name: "LabKit", package: "crypto-lab"),
                .product(name: "LabBuiltIns", package: "crypto-lab"),
                .product(name: "LabTestKit", package: "crypto-lab"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
