// swift-tools-version:6.1
import PackageDescription

// A reporter's package: it depends on LabKit alone, the lab's plugin API, and so builds
// where OpenSSL's, avahi's and Argon2's development files are absent (check.sh builds it
// with them hidden). docs/architecture.md, "A plugin outside the repository", walks through it.
// Its one executable, `report-results`, writes a run's reports again with its reporter.
let labKit = Target.Dependency.product(name: "LabKit", package: "crypto-lab")
let settings: [SwiftSetting] = [.enableUpcomingFeature("ExistentialAny")]

let package = Package(
    name: "ReporterOnly",
    platforms: [.macOS(.v15)],
    // By path here; by version (`from:`) in a package of your own.
    dependencies: [.package(name: "crypto-lab", path: "../..")],
    targets: [
        .target(name: "LabLatencyTable", dependencies: [labKit], swiftSettings: settings),
        .executableTarget(name: "report-results", dependencies: ["LabLatencyTable", labKit], swiftSettings: settings),
    ]
)
