import Histogram
import LabCore
import LabResults
import LabTestSupport
import Testing

/// A threshold's outcome carries its measured value and its bound as numbers with a unit, so
/// that tools read them without parsing "2.9 ms".
@Suite(.tier(.unit)) struct ThresholdValueTests {
    /// One `lockout` group: 100 exchanges of exactly 1 µs (exact in an HDR histogram at three
    /// digits) in the 1 s measured window, 3 errors in 200 iterations.
    static func result() -> RunResult {
        var histogram = Histogram<UInt64>(numberOfSignificantValueDigits: .three)
        for _ in 0..<100 { histogram.record(1_000) }
        return OutcomeTests.result([
            GroupResult(
                key: OutcomeTests.key,
                flowKind: "lockout",
                insecure: false,
                steps: [.exchange: histogram],
                errors: ["timeout": 3],
                iterations: 200
            )
        ])
    }

    static func evaluate(_ metric: String, _ condition: String) throws -> ThresholdOutcome {
        try OutcomeTests.parse(metric, condition).get().evaluate(Self.result())
    }

    @Test("Times in ns, rates in 1/s, counts, and shares as fractions; both value and bound")
    func valuesAndBoundsAreNumbers() throws {
        let time = try Self.evaluate("lockout.exchange.p99", "< 2 µs")
        #expect(time.value == 1_000 && time.bound == 2_000 && time.unit == "ns" && time.passed, "\(time)")
        let missed = try Self.evaluate("lockout.exchange.p99", "< 0.5 µs")
        #expect(missed.value == 1_000 && missed.bound == 500 && !missed.passed, "\(missed)")
        let rate = try Self.evaluate("lockout.exchange.ops", "> 50")
        #expect(rate.value == 100 && rate.bound == 50 && rate.unit == "1/s" && rate.passed, "\(rate)")
        let count = try Self.evaluate("lockout.exchange.count", ">= 100")
        #expect(count.value == 100 && count.unit == "count" && count.passed, "\(count)")
        let share = try Self.evaluate("errors", "< 1%")
        #expect(share.value == 0.015 && share.bound == 0.01 && share.unit == "fraction" && !share.passed, "\(share)")
        let errors = try Self.evaluate("errors", "== 3")
        #expect(errors.value == 3 && errors.bound == 3 && errors.unit == "count" && errors.passed, "\(errors)")
    }

    @Test("p95 is a stat, judged on the run's p95 (not p90's or p99's)")
    func p95() throws {
        // 90 exchanges of 1 µs, 5 of 2 µs, 5 of 4 µs: p90 1 µs, p95 2 µs, p99 4 µs.
        var histogram = Histogram<UInt64>(numberOfSignificantValueDigits: .three)
        for (value, times) in [(1_000, 90), (2_000, 5), (4_000, 5)] {
            for _ in 0..<times { histogram.record(UInt64(value)) }
        }
        let result = OutcomeTests.result([
            GroupResult(key: OutcomeTests.key, flowKind: "lockout", insecure: false, steps: [.exchange: histogram])
        ])
        let met = try OutcomeTests.parse("lockout.exchange.p95", "< 3 µs").get().evaluate(result)
        #expect(met.value == 2_000 && met.passed, "\(met)")
        let missed = try OutcomeTests.parse("lockout.exchange.p95", "<= 1.5 µs").get().evaluate(result)
        #expect(missed.value == 2_000 && !missed.passed && missed.observed == "2 µs", "\(missed)")
    }

    @Test("Nothing measured: no value, the unit still named, and the threshold missed")
    func noDataHasNoValue() throws {
        let none = try Self.evaluate("lockout{provider=boringssl}.exchange.p99", "< 1 s")
        #expect(none.value == nil && none.bound == 1e9 && none.unit == "ns" && !none.passed, "\(none)")
        #expect(none.observed == "no data")
    }
}
