import Histogram
import LabCore
import LabResults
import LabTesting
import Testing

/// `report.stepUsage`: each step's CPU time and preemption, read only when a run asks for
/// them (docs/reports.md, "Beside the time"), since the reads are system calls inside the
/// exchange's time.
@Suite(.tier(.unit)) struct StepUsageTests {
    static func scenario(stepUsage: Bool?) -> String {
        let report = stepUsage.map { #", "report": { "stepUsage": \#($0) }"# } ?? ""
        return #"""
            { "name": "usage", "clients": { "count": 2 }, "load": { "iterations": 20 },
              "flows": [ { "flow": "cx", "suite": "x25519" } ]\#(report) }
            """#
    }

    /// Samples whose preemption is known, and samples with a CPU time, over every step of the run.
    static func watched(_ result: RunResult) -> (known: UInt64, cpu: UInt64, steps: Int) {
        let details = result.groups.flatMap { $0.details.values }
        let known = details.reduce(0) { $0 + $1.preempted + $1.unpreempted.totalCount }
        let cpu = details.reduce(0) { $0 + ($1.cpu?.totalCount ?? 0) }
        return (known, cpu, details.count)
    }

    @Test("By default a run reads no step's usage: no preempted shares, no CPU times")
    func offByDefault() async throws {
        for setting in [nil, false] {
            let result = try await TestPlan.run(Self.scenario(stepUsage: setting))
            #expect(result.completedIterations == 40)
            let seen = Self.watched(result)
            #expect(seen.known == 0 && seen.cpu == 0, "stepUsage \(String(describing: setting)): \(seen)")
        }
    }

    @Test("With report.stepUsage every step's samples say whether they were preempted, and the timed ones their CPU time")
    func onRequest() async throws {
        let result = try await TestPlan.run(Self.scenario(stepUsage: true))
        let group = try #require(result.groups.first)
        // Each step of each of the 40 exchanges: preempted or among the unpreempted.
        for step in [Step.sign, .verify, .encode, .decode, .exchange] {
            let detail = try #require(group.details[step], "\(step)")
            #expect(detail.preempted + detail.unpreempted.totalCount == 40, "\(step)")
        }
        #expect(group.details[.sign]?.cpu?.totalCount == 40)
        #expect(group.details[.exchange]?.cpu == nil, "the exchange awaits across threads: no CPU time")
    }
}
