// swift-tools-version:6.1
import PackageDescription

// Every lab target is built in the Swift 6 language mode with `ExistentialAny`,
// so an existential always says `any` where it costs a dynamic dispatch.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "crypto-lab",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "lab", targets: ["lab"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift.git", from: "0.2.0"),
        .package(url: "https://github.com/swiftcsv/SwiftCSV.git", from: "0.10.0"),
    ],
    targets: [
        // Scenario model, plugin protocols, registry, LabError, step timing. Imports no other lab module.
        .target(
            name: "LabCore",
            dependencies: [.product(name: "Histogram", package: "hdrhistogram-swift")],
            swiftSettings: swiftSettings
        ),
        // Framing and the cx/1 property-list codec, shared by server and client.
        .target(name: "LabWire", dependencies: ["LabCore"], swiftSettings: swiftSettings),
        // The cx/1 suites and exchange, written once over the CryptoProvider protocol.
        .target(name: "LabCrypto", dependencies: ["LabCore", "LabWire"], swiftSettings: swiftSettings),
        // The `swift-crypto` provider (BoringSSL inside).
        .target(
            name: "LabSwiftCrypto",
            dependencies: [
                "LabCore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        // The system's OpenSSL 3 through its EVP C API.
        .systemLibrary(
            name: "CLabOpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        // The `openssl` provider.
        .target(name: "LabOpenSSL", dependencies: ["LabCore", "CLabOpenSSL"], swiftSettings: swiftSettings),
        // The runner: scenario checks against the plugins, load models, recording, progress.
        .target(
            name: "LabRunner",
            dependencies: ["LabCore", "LabWire", .product(name: "Histogram", package: "hdrhistogram-swift")],
            swiftSettings: swiftSettings
        ),
        // Reporters: results.csv, report.md with SVG charts, results.json.
        .target(
            name: "LabReport",
            dependencies: ["LabCore", .product(name: "Histogram", package: "hdrhistogram-swift")],
            swiftSettings: swiftSettings
        ),
        // The built-in plugin lists, shared by the CLI and the tests.
        .target(
            name: "LabPlugins",
            dependencies: [
                "LabCore", "LabWire", "LabCrypto", "LabSwiftCrypto", "LabOpenSSL", "LabRunner", "LabReport",
            ],
            swiftSettings: swiftSettings
        ),
        // The command-line tool.
        .executableTarget(
            name: "lab",
            dependencies: [
                "LabCore", "LabWire", "LabCrypto", "LabPlugins", "LabRunner", "LabReport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        // Test support shared by the test targets: vector loading, the Python peer.
        .target(
            name: "LabTesting",
            dependencies: ["LabCore", "LabWire", "LabCrypto", "LabPlugins", "LabRunner"],
            path: "Tests/LabTesting",
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "LabCoreTests", dependencies: ["LabCore"], swiftSettings: swiftSettings),
        .testTarget(name: "LabWireTests", dependencies: ["LabCore", "LabWire"], swiftSettings: swiftSettings),
        .testTarget(
            name: "LabCryptoTests",
            dependencies: [
                "LabCore", "LabWire", "LabCrypto", "LabSwiftCrypto", "LabOpenSSL", "LabPlugins", "LabTesting",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LabRunnerTests",
            dependencies: [
                "LabCore", "LabWire", "LabCrypto", "LabPlugins", "LabRunner", "LabReport", "LabTesting",
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LabReportTests",
            dependencies: [
                "LabCore", "LabReport", "LabRunner", "LabPlugins", "LabTesting",
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "SwiftCSV", package: "SwiftCSV"),
            ],
            exclude: ["Snapshots"],
            swiftSettings: swiftSettings
        ),
    ]
)
