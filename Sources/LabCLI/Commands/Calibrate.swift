import ArgumentParser
import Foundation
import LabCore
import LabKit
import LabResults
import LabRunner

/// `lab calibrate`: the reference operations every run calibrates with, timed alone.
struct Calibrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Time the calibration operations (RSA-2048 sign and verify, AES-128-CBC 16 KiB) with a provider.",
        discussion: """
            Runs each operation back to back for --seconds and prints operations per second, as \
            `openssl speed` does (Benchmarks/openssl-speed.sh compares the two), then one calibration \
            sample as every run records it.
            """
    )

    @Option(help: "The provider: \(LabCLI.catalog.plugins.providers.names.joined(separator: ", ")).")
    var provider = "openssl"

    @Option(help: "Seconds per operation.")
    var seconds = 3.0

    @Flag(
        help:
            "Print JSON: {provider, seconds, rates: {operation: ops/s of wall time}, cpuRates: {operation: ops/s of CPU time}, sample}."
    )
    var json = false

    struct Output: Codable {
        var provider: String
        var seconds: Double
        /// Operations per second of wall time.
        var rates: [String: Double]
        /// Operations per second of the thread's CPU time.
        var cpuRates: [String: Double]
        var sample: CalibrationSample
    }

    func run() async throws {
        try await reportingErrors {
            guard self.seconds > 0, self.seconds <= 600 else {
                throw ValidationError("--seconds must be above 0 and at most 600")
            }
            let calibrator = try Calibrator(try LabCLI.catalog.plugins.providers.make(self.provider))
            var rates: [String: Double] = [:]
            var cpuRates: [String: Double] = [:]
            for operation in Calibrator.Operation.allCases {
                let rate = try calibrator.rate(operation, seconds: self.seconds)
                rates[operation.rawValue] = rate.wall
                cpuRates[operation.rawValue] = rate.cpu
            }
            let output = Output(
                provider: calibrator.provider,
                seconds: self.seconds,
                rates: rates,
                cpuRates: cpuRates,
                sample: try calibrator.sample()
            )
            if self.json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                print(String(decoding: try encoder.encode(output), as: UTF8.self))
                return
            }
            print("Calibration operations, \(calibrator.provider), \(TimeSpan.trimmed(self.seconds)) s each:")
            print("  operation          ops/s (wall)  µs (wall)  ops/s (CPU)")
            for operation in Calibrator.Operation.allCases {
                let rate = rates[operation.rawValue] ?? 0
                print(
                    "  \(operation.rawValue.padding(toLength: 18, withPad: " ", startingAt: 0))"
                        + String(
                            format: "%12.1f %10.2f %12.1f",
                            rate,
                            rate > 0 ? 1e6 / rate : 0,
                            cpuRates[operation.rawValue] ?? 0
                        )
                )
            }
            print(
                String(
                    format: "Calibration unit (√(sign × AES 16 KiB) of a sample): %.2f µs",
                    output.sample.unit / 1000
                )
            )
        }
    }
}
