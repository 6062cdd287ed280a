import Foundation
import Histogram
import LabCore
import LabResults
import LabTestSupport
import Testing

/// The capacity figures from a run's intervals, and the knee's rules, on made-up runs.
@Suite(.tier(.unit)) struct CapacityUnitTests {
    static let key = GroupKey(flow: "login", suite: "-", provider: "swift-crypto", transport: "tcp")

    /// Stages of 2 s at 10, 20, 30, … per second over 1 s intervals: each stage's exchanges
    /// all took `latencies[stage]`, `completed[stage]` ended per second, `errors[stage]` failed.
    static func run(latencies: [Double], completed: [UInt64], errors: [UInt64]? = nil) -> RunResult {
        let errors = errors ?? Array(repeating: 0, count: latencies.count)
        var result = OutcomeTests.result([])
        var intervals = RunIntervals(width: 1_000_000_000, origin: Date(timeIntervalSince1970: 0))
        for stage in latencies.indices {
            for second in 0..<2 {
                var histogram = RunIntervals.histogram()
                histogram.record(UInt64(latencies[stage] * 1e6), count: UInt64((stage + 1) * 10))
                intervals.groups[Self.key, default: [:]][2 * stage + second] = RunIntervals.Slice(
                    steps: [.exchange: SparseHistogram(histogram)],
                    errors: errors[stage],
                    completed: completed[stage]
                )
            }
        }
        result.intervals = intervals
        result.stages = LoadStages(
            stages: latencies.indices.map {
                LoadStages.Stage(
                    rate: Double(10 * ($0 + 1)),
                    startNanoseconds: UInt64($0) * 2_000_000_000,
                    durationNanoseconds: 2_000_000_000
                )
            },
            kneeP99Nanoseconds: 100_000_000
        )
        return result
    }

    @Test("Each stage's throughput, latency and verdict; the knee where p99 crosses the bound, on a log scale")
    func kneeInterpolated() throws {
        let capacity = try #require(
            Capacity.of(Self.run(latencies: [10, 20, 40, 400], completed: [10, 20, 30, 32])).first
        )
        #expect(capacity.points.map(\.offered) == [10, 20, 30, 40])
        #expect(capacity.points.map(\.throughput) == [10, 20, 30, 32])
        #expect(capacity.points.map(\.exchanges) == [20, 40, 60, 80])
        #expect(capacity.points.map(\.sustained) == [true, true, true, false])
        let p99 = try #require(capacity.points[2].p99)
        #expect(abs(p99 - 40e6) / 40e6 < 0.01, "two significant digits: \(p99)")
        let knee = try #require(capacity.knee)
        #expect(knee.below == 2 && knee.above == 3)
        // 30 + 10 × ln(100/40) / ln(400/40) = 33.98
        #expect(abs(knee.rate - 33.98) < 0.1, "\(knee.rate)")
    }

    @Test("Served too little or failed: not sustained; a failing stage above puts the knee at the last sustained rate")
    func verdicts() throws {
        let starved = try #require(
            Capacity.of(Self.run(latencies: [10, 20, 40, 50], completed: [10, 20, 26, 40])).first
        )
        #expect(starved.points.map(\.sustained) == [true, true, false, true], "30/s served at 26/s is under 90%")
        // 40/s sustained after it: the starved stage was a disturbance, not the limit.
        #expect(starved.knee == nil)
        let failing = try #require(
            Capacity.of(Self.run(latencies: [10, 20, 40, 400], completed: [10, 20, 30, 30], errors: [0, 0, 0, 1])).first
        )
        #expect(failing.points[3].errors == 2 && failing.knee?.rate == 30)
    }

    @Test("A stage that missed the bound below one that held it is not the knee: the knee is where stages stop holding it")
    func passingDisturbance() throws {
        let capacity = try #require(
            Capacity.of(Self.run(latencies: [10, 300, 20, 40, 400], completed: [10, 20, 30, 40, 42])).first
        )
        #expect(capacity.points.map(\.sustained) == [true, false, true, true, false])
        #expect(capacity.knee?.below == 3 && capacity.knee?.above == 4, "\(String(describing: capacity.knee))")
    }

    @Test("A stall's backlog drained by the stages after it is not the knee: the knee is what the first stage behind served")
    func drainingBacklog() throws {
        // 30/s stalls (10 served); 40/s and 50/s miss the bound behind its backlog while serving
        // 45 and 50 a second; 60/s serves 52: the server's capacity, with a backlog to work on.
        let capacity = try #require(
            Capacity.of(
                Self.run(latencies: [10, 20, 300, 300, 300, 400], completed: [10, 20, 10, 45, 50, 52])
            ).first
        )
        #expect(capacity.points.map(\.sustained) == [true, true, false, false, false, false])
        #expect(capacity.points.map(\.draining) == [false, false, false, true, true, false])
        let knee = try #require(capacity.knee)
        #expect(knee.below == 4 && knee.above == 5 && knee.rate == 52, "\(knee)")
        // What the stage above served is kept within the two stages' rates.
        let fast = try #require(
            Capacity.of(Self.run(latencies: [10, 300, 300, 400], completed: [10, 5, 30, 25])).first?.knee
        )
        #expect(fast.below == 2 && fast.rate == 30, "\(fast)")
        // A stage that failed an exchange is not draining, whatever it served.
        let failing = try #require(
            Capacity.of(
                Self.run(latencies: [10, 300, 300, 400], completed: [10, 5, 45, 39], errors: [0, 0, 1, 0])
            ).first
        )
        #expect(failing.points[2].draining == false && failing.knee?.below == 0, "\(failing.points)")
    }

    @Test("A first stage slowed by set-up is not the knee; no sustained stage, or none failing after one: no knee")
    func noKnee() throws {
        let slowStart = try #require(
            Capacity.of(Self.run(latencies: [300, 20, 40, 400], completed: [10, 20, 30, 32])).first
        )
        #expect(slowStart.points[0].sustained == false && slowStart.knee?.below == 2)
        let never = try #require(
            Capacity.of(Self.run(latencies: [300, 300, 300, 300], completed: [10, 20, 30, 40])).first
        )
        #expect(never.knee == nil)
        let always = try #require(
            Capacity.of(Self.run(latencies: [10, 10, 10, 10], completed: [10, 20, 30, 40])).first
        )
        #expect(always.knee == nil && always.points.allSatisfy { $0.sustained == true })
        // Stages that do not fall on whole intervals are not measured.
        var offGrid = Self.run(latencies: [10, 10, 10, 10], completed: [10, 20, 30, 40])
        offGrid.stages?.stages[1].startNanoseconds += 500_000_000
        #expect(Capacity.of(offGrid).isEmpty)
    }
}
