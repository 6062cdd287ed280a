// swift-tools-version: 6.1
// The lab's libFuzzer targets: build and run them with `bash scripts/fuzz.sh` (docs/hardening.md, "Fuzzing").
// Built on its own, with `-sanitize=fuzzer,address -parse-as-library` applied to every module,
// so that the lab's own build never carries the instrumentation.
import PackageDescription

import class Foundation.ProcessInfo
import struct Foundation.URL

// The lab is the folder above; SwiftPM names a path dependency after its folder.
let lab = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

// Each fuzzer and the lab's module with its target (LabFuzzFrame, …): a fuzzer links only
// the modules its target reaches, so `frame` builds without swift-crypto or GRDB, and
// libFuzzer scans only the coverage counters of the code the target can reach (`cx`, `msg`
// and `scenario` read the built-in plugins from the catalog, LabBuiltIns, and link them).
let targets = ["frame": "LabFuzzFrame", "cx": "LabFuzzCX", "msg": "LabFuzzMsg", "scenario": "LabFuzzScenario"]

let package = Package(
    name: "crypto-lab-fuzz",
    platforms: [.macOS(.v15)],
    dependencies: [.package(path: "..")],
    targets: [.target(name: "CLibFuzzer", path: "Targets/CLibFuzzer")]
        + targets.sorted(by: { $0.key < $1.key }).map { name, module in
            .executableTarget(
                name: "fuzz-\(name)",
                dependencies: ["CLibFuzzer", .product(name: module, package: lab)],
                path: "Targets/\(name)"
            )
        }
)
