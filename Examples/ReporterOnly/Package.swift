// swift-tools-version:6.1
import PackageDescription

// A reporter's package: it depends on LabKit alone, the lab's plugin API, and so builds
// where OpenSSL's, avahi's and Argon2's development files are absent (check.sh builds it
// with them hidden). docs/architecture.md, "A plugin outside the repository", walks through it.
let package = Package(
    name: "ReporterOnly",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "report-results", targets: ["report-results"]),
        .library(name: "LabLatencyTable", targets: ["LabLatencyTable"]),
    ],
    dependencies: [
        // By path here; by version (`from:`) in a package of your own.
        .package(name: "crypto-lab", path: "../.."),
    ],
    targets: [
        .target(
            name: "LabLatencyTable",
            dependencies: [.product(name: "LabKit", package: "crypto-lab")],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .executableTarget(
            name: "report-results",
            dependencies: ["LabLatencyTable", .product(name: "LabKit", package: "crypto-lab")],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
    ]
)
