// swift-tools-version: 6.1
// The lab's micro-benchmarks (ordo-one/benchmark): `cd Benchmarks && swift package benchmark`.
import PackageDescription

import class Foundation.ProcessInfo
import struct Foundation.URL

// The lab is the folder above; SwiftPM names a path dependency after its folder, which is
// whatever the clone is called.
let lab = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

let package = Package(
    name: "crypto-lab-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: ".."),
        // MallocInterposer only: the default RuntimeInterposer trait needs a package this
        // machine's mirror does not have.
        .package(url: "https://github.com/ordo-one/benchmark.git", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "Primitives",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "LabBenchmarks", package: lab),
            ],
            path: "Benchmarks/Primitives",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "Exchange",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "LabBenchmarks", package: lab),
            ],
            path: "Benchmarks/Exchange",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
