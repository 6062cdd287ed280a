public import Foundation
import Histogram
import LabCore
public import LabResults

/// Writes `bmf.json` in the Bencher Metric Format (https://bencher.dev/docs/reference/bencher-metric-format/):
/// one benchmark per group and step (`cx/x25519/swift-crypto/in-process/sign`), its `latency`
/// in nanoseconds, the median with a 95% confidence interval as lower and upper values; and
/// for the step throughput is read from (`exchange`), its `throughput` in operations per
/// second, with its `bytes` on the wire per iteration (sent and received). `bencher run
/// --adapter json --file bmf.json` tracks them over time.
public struct BMFReporter: Reporter {
    /// `bmf`.
    public static let name = "bmf"
    /// The file it writes.
    public static let fileName = "bmf.json"

    /// A BMF reporter; it has no options.
    public init(options: ReportOptions) {}

    public func write(_ result: RunResult, to directory: URL) throws -> [URL] {
        let url = directory.appendingPathComponent(Self.fileName)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data: Data
        do {
            data = try encoder.encode(Self.metrics(result))
        } catch {
            throw LabError(.storage, "Cannot encode \(Self.fileName)", cause: UnderlyingError(describing: error))
        }
        try writeData(data + Data("\n".utf8), to: url)
        return [url]
    }

    /// One measure: a value and, when known, the bounds of its confidence interval.
    struct Metric: Encodable, Equatable {
        var value: Double
        var lowerValue: Double?
        var upperValue: Double?

        enum CodingKeys: String, CodingKey {
            case value
            case lowerValue = "lower_value"
            case upperValue = "upper_value"
        }
    }

    /// Benchmark name → measure → metric; server-side groups included (their steps are the
    /// server's own), groups without samples left out.
    static func metrics(_ result: RunResult) -> [String: [String: Metric]] {
        var benchmarks: [String: [String: Metric]] = [:]
        for group in result.groups {
            let throughput = result.throughputRow(of: group)?.step
            for entry in group.orderedSteps {
                guard let histogram = group.steps[entry.step], histogram.totalCount > 0 else { continue }
                let key = group.key
                let name = [key.flow, key.suite, key.provider, key.transport, entry.step.name].joined(separator: "/")
                let (lower, upper) = Self.medianInterval(histogram)
                var measures = [
                    "latency": Metric(
                        value: Double(histogram.valueAtPercentile(50)),
                        lowerValue: lower,
                        upperValue: upper
                    )
                ]
                if entry.step == throughput, let statistics = result.statistics(group, entry.step) {
                    measures["throughput"] = Metric(value: statistics.opsPerSecond)
                    // Bytes on the wire per iteration, both ways (a measure of its own in Bencher).
                    if let bytes = group.bytesPerIteration { measures["bytes"] = Metric(value: bytes.sent + bytes.received) }
                }
                benchmarks[name] = measures
            }
        }
        return benchmarks
    }

    /// A distribution-free 95% confidence interval of the median, from order statistics: the
    /// samples of ranks n/2 ∓ 0.98 √n (the binomial's normal approximation), read from the
    /// histogram; the whole range for fewer than 6 samples.
    static func medianInterval(_ histogram: Histogram<UInt64>) -> (Double, Double) {
        let count = Double(histogram.totalCount)
        guard count >= 6 else { return (Double(histogram.min), Double(histogram.max)) }
        let half = 0.98 * count.squareRoot()
        let lowerRank = max(1, (count / 2 - half).rounded(.down))
        let upperRank = min(count, (count / 2 + half).rounded(.up) + 1)
        return (
            Double(histogram.valueAtPercentile(lowerRank / count * 100)),
            Double(histogram.valueAtPercentile(upperRank / count * 100))
        )
    }
}
