import Foundation
import LabCore
import LabResults
import LabRunner
import LabScenario
import LabTestSupport
import Testing

/// `Plan.with(_:)`: a validated plan and a run's options, made into the plan the run runs.
@Suite(.tier(.unit)) struct RunOptionsTests {
    @Test("A run's options reach the plan; the validated plan is left as it was; a shard too many is refused")
    func optionsReachThePlan() throws {
        let plan = try CountedAloneTests.plan(load: #"{ "iterations": 24 }"#)
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let run = try plan.with(
            RunOptions(
                dataDirectory: "/tmp/lab-run-options",
                shard: Shard(index: 1, count: 1),
                startAt: start,
                formats: ["junit", "csv"],
                slowdowns: [.sign: 0.01]
            )
        )
        #expect(run.dataDirectory == "/tmp/lab-run-options")
        #expect(run.shard == Shard(index: 1, count: 1) && run.startAt == start)
        #expect(run.slowdowns == [.sign: 0.01])
        // A format the scenario already names is not added twice.
        #expect(run.scenario.report.formats == plan.scenario.report.formats + ["junit", "csv"].filter {
            !plan.scenario.report.formats.contains($0)
        })
        #expect(plan.dataDirectory == nil && plan.shard == nil && plan.startAt == nil && plan.slowdowns.isEmpty)
        // The scenario has one client: two slices cannot be made of it.
        let refused = #expect(throws: LabError.self) { try plan.with(RunOptions(shard: Shard(index: 1, count: 2))) }
        #expect(refused?.message == "--shard 1/2: 1 clients cannot make 2 slices", "\(String(describing: refused))")
    }

    @Test("A run's results carry its provenance and its thresholds, judged once; a shard's carry neither thresholds nor a made-up id")
    func finishedOnce() async throws {
        let plan = try CountedAloneTests.plan(load: #"{ "iterations": 4 }"#)
        let lab = LabInfo(version: "9.9.9-test", commit: String(repeating: "a", count: 40))
        let provenance = RunProvenance(runId: "run-7", tags: ["branch": "main"], lab: lab)
        let whole = try await Runner(plan: try plan.with(RunOptions(provenance: provenance))).run()
        #expect(whole.metadata.runId == "run-7" && whole.metadata.tags == ["branch": "main"])
        #expect(whole.metadata.lab == lab)
        #expect(whole.thresholds.map(\.metric) == ["errors"] && whole.passed, "\(whole.thresholds)")
        // No id given: a new one for a whole run, none for a shard (its merge's shards share one).
        let unnamed = try await Runner(plan: try plan.with(RunOptions())).run()
        #expect(unnamed.metadata.runId?.count == 36, "\(String(describing: unnamed.metadata.runId))")
        let shard = try await Runner(plan: try plan.with(RunOptions(shard: Shard(index: 1, count: 1)))).run()
        #expect(shard.metadata.runId == nil && shard.thresholds.isEmpty)
    }
}
