import Foundation
import LabCore
import LabResults
import LabScenario
import LabTestSupport
import Testing

/// Outcome counts: recorders, merged groups, thresholds.
@Suite(.tier(.unit)) struct OutcomeTests {
    /// A recorder written before outcomes existed: it only times.
    struct TimingOnly: StepRecorder {
        var recorded = 0
        mutating func record(_ step: Step, nanoseconds: UInt64) { self.recorded += 1 }
    }

    /// Counts one of each, as a flow would, through any recorder.
    static func countSome<R: StepRecorder>(_ recorder: inout R) {
        recorder.count("attempts")
        recorder.count("attempts")
        recorder.count("locked", by: 3)
        recorder.count("postponed", by: 0)
        recorder.record(.exchange, nanoseconds: 5)
    }

    static let key = GroupKey(flow: "lockout", suite: "-", provider: "swift-crypto", transport: "in-process")

    /// A run of `groups`, with the given thresholds evaluated.
    static func result(_ groups: [GroupResult]) -> RunResult {
        RunResult(
            metadata: RunMetadata(
                scenario: "outcomes",
                startedAt: Date(timeIntervalSince1970: 0),
                build: "debug",
                machine: MachineInfo(hostname: "h", cpu: "c", cores: 1, memoryBytes: 1, os: "o", kernel: "k"),
                providers: [],
                transport: "in-process",
                clients: 1,
                load: "closed",
                command: ""
            ),
            scenarioText: "",
            groups: groups,
            measuredNanoseconds: 1_000_000_000,
            totalNanoseconds: 1_000_000_000,
            plannedIterations: 10,
            completedIterations: 10,
            warmupIterations: 0,
            stoppedByDeadline: false
        )
    }

    /// Parses a threshold against a `lockout` flow (labelled `lockout` and `lockout-2`) with steps `login` and `exchange`.
    static func parse(_ metric: String, _ condition: String) -> Result<Threshold, ThresholdProblem> {
        let steps = [Step("login"), .exchange]
        return Threshold.parse(
            metric: metric,
            condition: condition,
            flows: ["lockout": steps, "lockout-2": steps]
        )
    }

    @Test("Step timings add up outcome counts by name")
    func stepTimingsCount() {
        var timings = StepTimings()
        Self.countSome(&timings)
        #expect(timings.outcomes == ["attempts": 2, "locked": 3, "postponed": 0])
        #expect(timings.total(.exchange) == 5)
    }

    @Test("Recorders that only time ignore counts, by default and NoStepRecorder")
    func recordersIgnoreCounts() {
        var timing = TimingOnly()
        Self.countSome(&timing)
        #expect(timing.recorded == 1)
        var none = NoStepRecorder()
        Self.countSome(&none)
    }

    @Test("Merging groups sums their outcomes by name")
    func mergeSumsOutcomes() {
        var group = GroupResult(
            key: Self.key,
            flowKind: "lockout",
            insecure: false,
            iterations: 4,
            outcomes: ["attempts": 4, "locked": 1]
        )
        group.merge(
            GroupResult(
                key: Self.key,
                flowKind: "lockout",
                insecure: false,
                iterations: 6,
                outcomes: ["attempts": 6, "postponed": 2]
            )
        )
        #expect(group.outcomes == ["attempts": 10, "locked": 1, "postponed": 2])
        #expect(group.iterations == 10)
        #expect(GroupResult(key: Self.key, flowKind: "lockout", insecure: false).outcomes.isEmpty)
    }

    @Test("Outcome thresholds parse for all flows and for one flow, filtered or not")
    func parsesOutcomeMetrics() throws {
        let all = try Self.parse("outcomes.guessed", ">= 1").get()
        #expect(all.flow == nil)
        #expect(all.measure == .outcome("guessed"))
        #expect(all.comparison == .greaterOrEqual && all.bound == 1)
        let one = try Self.parse("lockout.outcomes.locked", "== 0").get()
        #expect(one.flow == "lockout" && one.measure == .outcome("locked"))
        let filtered = try Self.parse("lockout{provider=openssl}.outcomes.login.postponed", "< 5").get()
        #expect(filtered.filters == ["provider": "openssl"])
        #expect(filtered.measure == .outcome("login.postponed"))
        // Step metrics are unchanged.
        #expect(try Self.parse("lockout.login.p99", "< 1 s").get().measure == .step(Step("login"), .p99))
    }

    @Test("Outcome thresholds reject bad names and units; misspelled steps are still rejected")
    func rejectsBadOutcomeMetrics() {
        for metric in ["outcomes.", "outcomes.a b", "lockout.outcomes.", "lockout.outcomes.x..y", "outcomes.x."] {
            guard case .failure(let problem) = Self.parse(metric, ">= 1") else {
                Issue.record("\(metric) parsed")
                continue
            }
            #expect(problem.inMetric)
            #expect(problem.message.contains("expected an outcome name"), "\(metric): \(problem.message)")
        }
        guard case .failure(let unit) = Self.parse("outcomes.guessed", ">= 1 ms") else {
            Issue.record("a unit on an outcome parsed")
            return
        }
        #expect(!unit.inMetric)
        #expect(unit.message == #"expected a plain count for an outcome, such as ">= 1", found unit 'ms'"#)
        guard case .failure(let step) = Self.parse("lockout.logn.p99", "< 1 s") else {
            Issue.record("a misspelled step parsed")
            return
        }
        #expect(step.message.hasPrefix("no step 'logn' in flow 'lockout' (did you mean 'login'?)"))
        guard case .failure(let flow) = Self.parse("lokout.outcomes.locked", "== 0") else {
            Issue.record("an unknown flow parsed")
            return
        }
        #expect(flow.message.contains("no flow labelled 'lokout' (did you mean 'lockout'?)"))
    }

    @Test("A flow labelled 'outcomes' keeps its metrics; its steps win over outcome names")
    func outcomesAsALabel() throws {
        let flows = ["outcomes": [Step("outcomes"), .exchange]]
        let step = try Threshold.parse(metric: "outcomes.exchange.p99", condition: "< 1 s", flows: flows).get()
        #expect(step.flow == "outcomes" && step.measure == .step(.exchange, .p99))
        let errors = try Threshold.parse(metric: "outcomes.errors", condition: "== 0", flows: flows).get()
        #expect(errors.flow == "outcomes" && errors.measure == .errors(percent: false))
        let stepNamedOutcomes = try Threshold.parse(metric: "outcomes.outcomes.p50", condition: "< 1 s", flows: flows)
            .get()
        #expect(stepNamedOutcomes.measure == .step(Step("outcomes"), .p50))
    }

    @Test("Outcome thresholds sum the matching groups; a group without the outcome counts 0")
    func evaluatesOutcomes() throws {
        let openssl = GroupKey(flow: "lockout-2", suite: "-", provider: "openssl", transport: "in-process")
        let result = Self.result([
            GroupResult(
                key: Self.key,
                flowKind: "lockout",
                insecure: false,
                outcomes: ["attempts": 7, "locked": 1]
            ),
            GroupResult(key: openssl, flowKind: "lockout", insecure: false, outcomes: ["attempts": 5]),
        ])
        func evaluate(_ metric: String, _ condition: String) throws -> ThresholdOutcome {
            try Self.parse(metric, condition).get().evaluate(result)
        }
        #expect(
            try evaluate("outcomes.attempts", "== 12")
                == ThresholdOutcome(
                    metric: "outcomes.attempts",
                    condition: "== 12",
                    observed: "12",
                    passed: true,
                    value: 12,
                    bound: 12,
                    unit: "count"
                )
        )
        #expect(try evaluate("lockout.outcomes.attempts", "== 12").passed, "a flow name matches all its entries")
        #expect(try evaluate("lockout-2.outcomes.attempts", "> 5").observed == "5")
        #expect(try !evaluate("lockout-2.outcomes.attempts", "> 5").passed)
        #expect(try evaluate("lockout{provider=openssl}.outcomes.locked", "== 0").observed == "0")
        #expect(try evaluate("lockout{provider=openssl}.outcomes.locked", "== 0").passed)
        #expect(try !evaluate("outcomes.locked", "== 0").passed)
        let none = try evaluate("lockout{provider=boringssl}.outcomes.locked", "== 0")
        #expect(none.observed == "no data" && !none.passed)
    }
}
