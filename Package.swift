// swift-tools-version:6.1
import PackageDescription

import class Foundation.ProcessInfo

// Every lab target is built in the Swift 6 language mode with `ExistentialAny`,
// so an existential always says `any` where it costs a dynamic dispatch.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

// `LAB_WITHOUT_JEMALLOC=1 swift build --sanitize=address …`: AddressSanitizer must own malloc,
// and jemalloc linked into the same process frees what ASan allocated (docs/hardening.md, "Fuzzing").
// Without jemalloc the lab reports no heap figures.
let withoutJemalloc = ProcessInfo.processInfo.environment["LAB_WITHOUT_JEMALLOC"] == "1"

// The tests' own code (the test targets and LabTestSupport) is compiled without optimisation in
// the release build the suite runs: the lab's modules they call keep `-O`, and the test code
// builds in less time than optimised (scripts/test: one release build of the lab and its
// tests). No product contains these targets, so a package that depends on the lab never
// builds them, and SwiftPM's rule against unsafe flags in dependencies' products holds.
let testSettings: [SwiftSetting] = swiftSettings + [.unsafeFlags(["-Onone"])]

let package = Package(
    name: "crypto-lab",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "lab", targets: ["lab"]),
        // The lab as a library (docs/architecture.md, "Modules and products"). LabKit is the
        // plugin API, one module that links no OpenSSL, avahi or Argon2: the plugin protocols,
        // the scenario, the results, the runner, the charts and the reporters, `PluginCatalog`.
        .library(name: "LabKit", targets: ["LabKit"]),
        // The plugins that ship with the lab, each a product of its own, and the catalog that
        // lists them all (LabBuiltIns, which a package's own `lab` extends).
        .library(name: "LabSwiftCrypto", targets: ["LabSwiftCrypto"]),
        .library(name: "LabOpenSSL", targets: ["LabOpenSSL"]),
        .library(name: "LabCX", targets: ["LabCX"]),
        .library(name: "LabTransports", targets: ["LabTransports"]),
        .library(name: "LabMessaging", targets: ["LabMessaging"]),
        .library(name: "LabDiscovery", targets: ["LabDiscovery"]),
        .library(name: "LabBuiltIns", targets: ["LabBuiltIns"]),
        // The command line as a function, `LabCLI.main(catalog:)`, so that a package's own
        // executable is the `lab` with its plugins added; and what proves a plugin the way the
        // built-in ones are proven: Wycheproof, the Python peer, the transport conformance
        // suite, the faulty provider (LabTestKit).
        .library(name: "LabCLI", targets: ["LabCLI"]),
        .library(name: "LabTestKit", targets: ["LabTestKit"]),
        .executable(name: "two-host", targets: ["TwoHost"]),
        .executable(name: "link-delay", targets: ["LinkDelay"]),
        // For the benchmark package in Benchmarks/: its cases, built and tested here.
        .library(name: "LabBenchmarks", targets: ["LabBenchmarks"]),
        // For the fuzz package in Fuzz/: one fuzz target each (the tests use all four).
        .library(name: "LabFuzzFrame", targets: ["LabFuzzFrame"]),
        .library(name: "LabFuzzCX", targets: ["LabFuzzCX"]),
        .library(name: "LabFuzzMsg", targets: ["LabFuzzMsg"]),
        .library(name: "LabFuzzScenario", targets: ["LabFuzzScenario"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift.git", from: "0.2.0"),
        .package(url: "https://github.com/swiftcsv/SwiftCSV.git", from: "0.10.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        // report.html: Plot writes the page (escaping every text), Ink turns report.md's own
        // sections into HTML.
        .package(url: "https://github.com/JohnSundell/Plot.git", from: "0.14.0"),
        .package(url: "https://github.com/JohnSundell/Ink.git", from: "0.6.0"),
    ],
    targets: [
        // Scenario model, plugin protocols, registry, LabError, step timing. Imports no other lab module.
        .target(name: "LabCore", dependencies: ["CLabSystem", "CLabCounting"], swiftSettings: swiftSettings),
        // The scenario document: what `lab run` reads, decoded strictly (every problem with its
        // JSON path), its thresholds parsed, and its JSON schema's template. The plugins' own
        // checks of it are the runner's planner (ScenarioValidator).
        .target(name: "LabScenario", dependencies: ["LabCore"], swiftSettings: swiftSettings),
        // The results model: what a run measured (RunResult, step histograms and statistics,
        // calibration samples, memory, server stats), results.json, and the thresholds judged on it.
        .target(
            name: "LabResults",
            dependencies: ["LabCore", "LabScenario", .product(name: "Histogram", package: "hdrhistogram-swift")],
            swiftSettings: swiftSettings
        ),
        // The lab's wire vocabulary: the bplist codec, the `busy` answer, `serverStats`, and the
        // router that gives each request to the protocol that claims it.
        .target(
            name: "LabWire",
            dependencies: ["LabCore", "LabResults"],
            swiftSettings: swiftSettings
        ),
        // cx/1: its messages, the suites and the exchange, written once over CryptoProvider.
        .target(name: "LabCX", dependencies: ["LabCore", "LabWire", "LabFraming"], swiftSettings: swiftSettings),
        // The `swift-crypto` provider (BoringSSL inside).
        .target(
            name: "LabSwiftCrypto",
            dependencies: [
                "LabCore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings,
            plugins: ["LabBuildInfo"]
        ),
        // The system's OpenSSL 3 through its EVP C API.
        .systemLibrary(
            name: "CLabOpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        // The `openssl` provider.
        .target(name: "LabOpenSSL", dependencies: ["LabCore", "CLabOpenSSL"], swiftSettings: swiftSettings),
        // The micro-benchmarks' cases: Benchmarks/ times them, this package's tests run each once.
        .target(
            name: "LabBenchmarks",
            dependencies: [
                "LabCore", "LabFraming", "LabWire", "LabCX", "LabSwiftCrypto", "LabOpenSSL", "LabBuiltIns", "LabMessaging",
            ],
            swiftSettings: swiftSettings
        ),
        // The fuzz targets and their properties, a module each (and LabFuzzSupport, what they
        // share), so that each fuzzer in Fuzz/ links, instruments and scans only what its target
        // reaches: `frame` neither swift-crypto nor GRDB; `cx`, `msg` and `scenario` read the
        // built-in plugins from the catalog (LabBuiltIns), and so link the lab's plugins.
        // The tests replay the committed corpus through all four (LabFuzzingTests).
        .target(name: "LabFuzzSupport", swiftSettings: swiftSettings),
        .target(
            name: "LabFuzzFrame",
            dependencies: [
                "LabFuzzSupport", "LabCore", "LabWire", "LabFraming", .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "LabFuzzCX",
            dependencies: ["LabFuzzSupport", "LabCore", "LabWire", "LabCX", "LabBuiltIns"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "LabFuzzMsg",
            dependencies: [
                "LabFuzzSupport", "LabCore", "LabWire", "LabCX", "LabSwiftCrypto", "LabMessaging", "LabBuiltIns", "LabServer",
                "LabTransports",
            ],
            swiftSettings: swiftSettings
        ),
        // `lab validate`'s registries, the catalog's (LabBuiltIns), and the validator itself (LabRunner).
        .target(
            name: "LabFuzzScenario",
            dependencies: [
                "LabFuzzSupport", "LabCore", "LabWire", "LabCX", "LabBuiltIns", "LabMessaging", "LabScenario",
                "LabRunner",
            ],
            swiftSettings: swiftSettings
        ),
        // Avahi's Bonjour-compatible dns_sd API.
        .systemLibrary(
            name: "CLabDNSSD",
            pkgConfig: "avahi-compat-libdns_sd",
            providers: [.apt(["libavahi-compat-libdnssd-dev"])]
        ),
        // DNS-SD: advertise, browse, resolve (docs/protocol.md §3), driven from Swift concurrency.
        .target(
            name: "LabDiscovery",
            dependencies: ["LabCore", "CLabDNSSD", .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings
        ),
        // Framing, all of it: the frame formats, the incremental parser and the NIO codec, on
        // its own so that the fuzzer builds it without TLS.
        .target(
            name: "LabFraming",
            dependencies: ["LabCore", .product(name: "NIOCore", package: "swift-nio")],
            swiftSettings: swiftSettings
        ),
        // The transports: in-process, and tcp and tls on SwiftNIO (the server's listener and
        // limits, the client, pinning).
        .target(
            name: "LabTransports",
            dependencies: [
                "LabCore", "LabResults", "LabWire", "LabFraming", "CLabSystem",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // Argon2's reference implementation (libargon2), for the argon2id password KDF.
        .systemLibrary(
            name: "CLabArgon2",
            providers: [.apt(["libargon2-dev"])]
        ),
        // The messaging service (msg/1): accounts in SQLite through GRDB, password KDFs, lockout
        // policies, captchas, end-to-end encrypted chats, and the flows that load and attack it.
        .target(
            name: "LabMessaging",
            dependencies: [
                "LabCore", "LabWire", "CLabArgon2",
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // C library calls the Swift overlay leaves out (getrandom); headers only.
        .systemLibrary(name: "CLabSystem"),
        // prctl(2) for the two-host tool (variadic in C, so not imported by Swift).
        .systemLibrary(name: "CLabTwoHost"),
        // Callgrind's client requests (valgrind/callgrind.h) for counted runs, each thread's CPU
        // time and context switches, and the `sigsuspend` that lets Valgrind 3.19 run the lab.
        .target(name: "CLabCounting"),
        // jemalloc's statistics (mallctl); linked into every program that imports it, `lab`
        // included, where it replaces the C library's malloc.
        .systemLibrary(
            name: "CLabJemalloc",
            providers: [.apt(["libjemalloc-dev"])]
        ),
        // The process heap as jemalloc counts it (`HeapStats`). Its own module, so LabCore and
        // the adapters that do not measure memory build without jemalloc.
        .target(
            name: "LabMemory",
            dependencies: ["LabCore", "LabResults"] + (withoutJemalloc ? [] : ["CLabJemalloc"]),
            swiftSettings: swiftSettings
        ),
        // The runner: scenario checks against the plugins, load models, recording, progress, and
        // a counted run's processes under callgrind (CountedRun).
        .target(
            name: "LabRunner",
            dependencies: [
                "LabCore", "LabScenario", "LabResults", "LabWire", "LabMemory",
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ],
            swiftSettings: swiftSettings
        ),
        // The SVG charts the reports draw, on one axis type and one legend type, and the
        // locale-free numbers they are written with. Plain numbers in, SVG out: nothing of the lab's.
        .target(name: "LabCharts", swiftSettings: swiftSettings),
        // What judges runs: `lab compare`'s comparison and its statistics (the rank-sum test),
        // `lab check`'s two gates on one row and verdict, groups of one run compared, selections,
        // and a merge judged against its scenario's thresholds.
        .target(
            name: "LabAnalysis",
            dependencies: [
                "LabCore", "LabScenario", "LabResults", "LabCharts",
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ],
            swiftSettings: swiftSettings
        ),
        // Reporters: results.csv, report.md with SVG charts, results.json, and what the analysis
        // found (comparison.md, check.md, JUnit, GitHub annotations).
        .target(
            name: "LabReport",
            dependencies: [
                "LabScenario", "LabCore", "LabResults", "LabCharts", "LabAnalysis",
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "Plot", package: "Plot"),
                .product(name: "Ink", package: "Ink"),
            ],
            swiftSettings: swiftSettings
        ),
        // The plugin API in one module (re-exports), and `PluginCatalog`.
        .target(
            name: "LabKit",
            dependencies: [
                "LabCore", "LabScenario", "LabResults", "LabWire", "LabRunner", "LabCharts", "LabAnalysis", "LabReport",
            ],
            swiftSettings: swiftSettings
        ),
        // The built-in plugins, listed once (`BuiltInPlugins`).
        .target(
            name: "LabBuiltIns",
            dependencies: [
                "LabKit", "LabCore", "LabScenario", "LabResults", "LabWire", "LabCX", "LabSwiftCrypto", "LabOpenSSL",
                "LabRunner", "LabReport", "LabTransports", "LabDiscovery", "LabMessaging",
            ],
            swiftSettings: swiftSettings
        ),
        // A lab server's composition root (`ServerAssembly`: the catalog's served protocols on a
        // transport), what it reports of itself (`serverStats`, metrics, report), its lifetimes,
        // and a run's live view.
        .target(
            name: "LabServer",
            dependencies: [
                "LabKit", "LabCore", "LabResults", "LabWire", "LabRunner", "LabReport", "LabTransports", "LabDiscovery",
                "LabMessaging", "LabMemory",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The command line, as a function of the plugin catalog.
        .target(
            name: "LabCLI",
            dependencies: [
                "LabKit", "LabFraming", "LabCore", "LabScenario", "LabResults", "LabWire", "LabRunner", "LabAnalysis", "LabReport", "LabServer",
                "LabTransports", "LabDiscovery", "LabMessaging", "LabMemory", "LabBuild",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // The command-line tool: LabCLI with the built-in plugins.
        .executableTarget(name: "lab", dependencies: ["LabCLI", "LabBuiltIns"], swiftSettings: swiftSettings),
        // What this build is: version, git commit, toolchain, package versions (written at
        // build time by Plugins/LabBuildInfo).
        .target(name: "LabBuild", swiftSettings: swiftSettings, plugins: ["LabBuildInfo"]),
        .plugin(name: "LabBuildInfo", capability: .buildTool()),
        // Child processes awaited by their output lines: the tests' and the two-host tool's.
        .target(name: "LabProcesses", swiftSettings: swiftSettings),
        // `two-host`, the two-host lab on one machine: two network namespaces, DNS-SD across a
        // veth pair (docs/several-hosts.md); scripts/two-host-net.sh makes and removes them.
        .executableTarget(
            name: "TwoHost",
            dependencies: [
                "LabProcesses", "LabCharts", "LabReport", "CLabTwoHost",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // `link-delay`: delay and jitter for the two-host link where the kernel has no netem,
        // holding each packet iptables' NFQUEUE hands it until its due time (C, on
        // libnetfilter_queue; two-host-net.sh starts one at each end of the link).
        .executableTarget(
            name: "LinkDelay",
            path: "Sources/LinkDelay",
            linkerSettings: [.linkedLibrary("netfilter_queue")]
        ),
        // The test kit, for the lab's tests and for plugin authors: Wycheproof's files run
        // against any provider, the Python peer, the transport conformance suite, a provider
        // that corrupts what it is told to.
        .target(
            name: "LabTestKit",
            dependencies: ["LabCore", "LabFraming", "LabCX", "LabWire", "LabProcesses"],
            swiftSettings: swiftSettings
        ),
        // Test support shared by the test targets: tiers, fixtures, processes; the test kit too.
        .target(
            name: "LabTestSupport",
            dependencies: [
                "LabServer",
                "LabCore", "LabScenario", "LabResults", "LabWire", "LabCX", "LabBuiltIns", "LabRunner",
                "LabProcesses", "LabTestKit",
            ],
            path: "Tests/LabTestSupport",
            swiftSettings: testSettings
        ),
        // Test support: a msg/1 server whose rekeys stall halfway, for RekeyCrashTests to kill
        // (the hook lives here, not in `lab`).
        .executableTarget(
            name: "StallingServer",
            dependencies: [
                "LabCore", "LabMessaging", "LabTransports", "LabBuiltIns",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Tests/StallingServer",
            swiftSettings: swiftSettings
        ),
        // Test support: the `lab` with a transport, a suite and a flow defined here, in no
        // module of the lab, added through the catalog (PluginCLITests runs it).
        .executableTarget(
            name: "PluginLab",
            dependencies: ["LabKit", "LabCLI", "LabBuiltIns", "LabCore", "LabCX", "LabTransports", "LabMessaging"],
            path: "Tests/PluginLab",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LabCoreTests",
            dependencies: ["LabCore", "CLabCounting", "LabTestSupport"],
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "LabResultsTests",
            dependencies: [
                "LabScenario", "LabCore", "LabResults", "LabTestSupport", .product(name: "Histogram", package: "hdrhistogram-swift"),
            ],
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "LabWireTests",
            dependencies: ["LabCX", "LabFraming", "LabCore", "LabWire", "LabTestSupport"],
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "LabFuzzingTests",
            dependencies: ["LabCore", "LabFuzzFrame", "LabFuzzCX", "LabFuzzMsg", "LabFuzzScenario", "LabTestSupport"],
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "LabCXTests",
            dependencies: [
                "LabFraming", "LabServer",
                "LabCore", "LabWire", "LabCX", "LabSwiftCrypto", "LabOpenSSL", "LabBuiltIns", "LabTestSupport",
                "LabBenchmarks",
            ],
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "LabRunnerTests",
            dependencies: [
                "CLabOpenSSL", "LabKit", "LabMessaging", "LabServer",
                "LabCore", "LabScenario", "LabResults", "LabWire", "LabCX", "LabBuiltIns", "LabRunner", "LabAnalysis", "LabReport",
                "LabTestSupport", "LabMemory", "LabSwiftCrypto", "LabTestKit",
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "SwiftCSV", package: "SwiftCSV"),
            ],
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "LabReportTests",
            dependencies: [
                "LabCore", "LabResults", "LabAnalysis", "LabReport", "LabRunner", "LabBuiltIns", "LabTestSupport",
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "SwiftCSV", package: "SwiftCSV"),
            ],
            exclude: ["Snapshots", "Fixtures"],
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "LabTransportsTests",
            dependencies: [
                "LabFraming", "LabMessaging", "LabServer",
                "LabCore", "LabScenario", "LabResults", "LabWire", "LabCX", "LabTransports", "LabBuiltIns", "LabRunner",
                "LabReport", "LabTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "LabMessagingTests",
            dependencies: [
                "LabCX", "LabProcesses", "LabCore", "LabResults", "LabWire", "LabMessaging", "LabTransports", "LabBuiltIns", "LabRunner", "LabReport",
                "LabTestSupport", "LabSwiftCrypto", "LabOpenSSL", "LabTestKit",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "LabDiscoveryTests",
            dependencies: ["LabCore", "LabDiscovery", "LabTestSupport"],
            swiftSettings: testSettings
        ),
    ]
)
