import Foundation
import Histogram
import LabAnalysis
import LabCore
import LabReport
import LabResults
import LabTestSupport
import Testing

/// `lab compare` judges the figures a reader acts on, p50, p99 and ops/s, and names which moved.
@Suite(.tier(.unit)) struct ComparisonFiguresTests {
    /// `count` samples like `ComparisonTests.timings`, with `tail` of them (a share) `tailScale` times slower.
    static func withTail(_ count: Int, median: Double, seed: UInt64, tail: Double, tailScale: Double) -> Histogram<UInt64> {
        var histogram = ComparisonTests.timings(count - Int(Double(count) * tail), median: median, seed: seed)
        histogram.add(ComparisonTests.timings(Int(Double(count) * tail), median: median * tailScale, seed: seed + 100))
        return histogram
    }

    @Test("Same p50, p99 ×4 (3% of samples far slower): slower, naming the p99")
    func tailMoved() throws {
        let base = ComparisonTests.run("base", [.exchange: ComparisonTests.timings(4000, median: 300_000, seed: 1)])
        let candidate = ComparisonTests.run(
            "candidate",
            [.exchange: Self.withTail(4000, median: 300_000, seed: 2, tail: 0.03, tailScale: 5)]
        )
        let comparison = Comparison(baseline: base, candidates: [candidate])
        let cell = try #require(comparison.rows.first?.cells.first)
        #expect(abs((cell.p50Ratio ?? 0) - 1) < 0.1, "the p50 stays: \(cell.p50Ratio ?? 0)")
        #expect((cell.p99Ratio ?? 0) > 3)
        #expect(cell.verdict == .slower)
        #expect(cell.moves.map(\.figure) == [.p99])
        #expect(cell.movesText.hasPrefix("p99 ×"))
        #expect(comparison.isSlower(candidate: 0))
        // The other way round, faster.
        let reverse = Comparison(baseline: candidate, candidates: [base])
        #expect(reverse.rows.first?.cells.first?.verdict == .faster)
    }

    @Test("Same timings, throughput ×0.566 in one rate per run: not judged, and the verdict says why")
    func throughputAloneIsNotJudged() throws {
        let base = ComparisonTests.run("base", [.exchange: ComparisonTests.timings(2000, median: 300_000, seed: 3)])
        var candidate = ComparisonTests.run("candidate", [.exchange: ComparisonTests.timings(2000, median: 300_000, seed: 4)])
        candidate.result.measuredNanoseconds = UInt64(1e9 / 0.566)
        let comparison = Comparison(baseline: base, candidates: [candidate])
        let cell = try #require(comparison.rows.first?.cells.first)
        #expect(abs((cell.opsRatio ?? 0) - 0.566) < 0.001)
        // Two runs' rates are two numbers: no test can tell a change from the machine's mood
        // (ComparisonConditionsTests judges them over intervals).
        #expect(cell.verdict == .noChange)
        #expect(cell.moves.isEmpty)
        #expect(cell.note?.hasPrefix("ops/s not judged: a run's rate is one figure") == true, "\(cell.note ?? "")")
        #expect(ComparisonReport(comparison).markdown().contains("ops/s not judged: a run's rate is one figure"))
    }

    @Test("A p50 that moved is named too, and the report's verdict says which figures moved")
    func reportNamesFigures() {
        let base = ComparisonTests.run("base", [.exchange: ComparisonTests.timings(2000, median: 300_000, seed: 5)])
        let candidate = ComparisonTests.run(
            "candidate",
            [.exchange: ComparisonTests.timings(2000, median: 300_000, seed: 6, scale: 1.5)]
        )
        let comparison = Comparison(baseline: base, candidates: [candidate])
        #expect(comparison.rows.first?.cells.first?.moves.map(\.figure).contains(.p50) == true)
        let report = ComparisonReport(comparison)
        #expect(report.markdown().contains("candidate ×1.5"), "\(report.markdown())")
        #expect(report.markdown().contains("slower than base: cx x25519 swift-crypto · exchange (p50)"))
        #expect(report.terminal().contains("SLOWER (p50 ×1.5"))
    }

    @Test("Runs whose groups do not match compare nothing")
    func nothingCompared() {
        let base = ComparisonTests.run("base", [.exchange: ComparisonTests.timings(100, median: 300_000, seed: 7)])
        var other = ComparisonTests.run("other", [.exchange: ComparisonTests.timings(100, median: 300_000, seed: 8)])
        other.result.groups[0].key.flow = "cx-renamed"
        #expect(Comparison(baseline: base, candidates: [other]).comparesNothing(candidate: 0))
        #expect(!Comparison(baseline: base, candidates: [base]).comparesNothing(candidate: 0))
    }
}
