import LabCore
import LabReport
import LabResults
import LabTestSupport
import Testing

/// `CountedFlows.combine`: the per-flow processes of a counted run made one result.
@Suite(.tier(.unit)) struct CountedFlowsTests {
    /// The fixture's run cut in two by group, as two flows' processes would report it.
    static func halves() -> (first: RunResult, second: RunResult) {
        var first = Fixture.result()
        var second = Fixture.result()
        first.groups = first.groups.filter { $0.key.suite == "x25519" }
        second.groups = second.groups.filter { $0.key.suite != "x25519" }
        first.completedIterations = 400
        second.completedIterations = 520
        first.warmupIterations = 40
        second.warmupIterations = 52
        second.metadata.providers = [ProviderInfo(name: "openssl", version: "OpenSSL 3.0.17")]
        second.totalNanoseconds = 1_000_000_000
        second.stoppedByDeadline = true
        return (first, second)
    }

    @Test("Every flow's groups, the iterations and times summed, the thresholds left to the caller")
    func combinesFlows() throws {
        let (first, second) = Self.halves()
        let combined = try CountedFlows.combine([first, second], command: "lab run gate.json --counted")
        #expect(combined.groups.map(\.key.suite) == Fixture.result().groups.map(\.key.suite))
        #expect(combined.groups.map(\.iterations) == Fixture.result().groups.map(\.iterations))
        #expect(combined.completedIterations == 920)
        #expect(combined.warmupIterations == 92)
        #expect(combined.plannedIterations == 1_600)
        #expect(combined.measuredNanoseconds == 2 * Fixture.measuredNanoseconds)
        #expect(combined.totalNanoseconds == 3_500_000_000)
        #expect(combined.stoppedByDeadline)
        #expect(combined.thresholds.isEmpty)
        #expect(combined.metadata.command == "lab run gate.json --counted")
        #expect(combined.metadata.providers.map(\.name) == ["swift-crypto", "openssl"])
    }

    @Test("One flow's result is the run's, with the command that asked for it")
    func oneFlow() throws {
        let only = Fixture.result()
        let combined = try CountedFlows.combine([only], command: "lab run one.json --counted")
        #expect(combined.groups.map(\.key) == only.groups.map(\.key))
        #expect(combined.completedIterations == only.completedIterations)
        #expect(combined.measuredNanoseconds == only.measuredNanoseconds)
        #expect(combined.metadata.command == "lab run one.json --counted")
        #expect(combined.thresholds.isEmpty)
        #expect(throws: LabError.self) { try CountedFlows.combine([], command: "lab") }
    }
}
