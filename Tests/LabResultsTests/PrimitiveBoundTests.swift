import Foundation
import Histogram
import LabCore
import LabResults
import LabScenario
import LabTestSupport
import Testing

/// The primitive bound and the `efficiency` threshold on results made to order.
@Suite(.tier(.unit)) struct PrimitiveBoundTests {
    /// A run of `clients` clients on `cores` cores whose single group did `exchanges` exchanges
    /// in `seconds`, each spending 100 µs in sign and 50 µs in verify, plus 1 set-up key.
    static func result(clients: Int, cores: Int, exchanges: Int, seconds: Double) -> RunResult {
        func histogram(_ value: UInt64, _ count: Int) -> Histogram<UInt64> {
            var histogram = Histogram<UInt64>(numberOfSignificantValueDigits: .three)
            for _ in 0..<count { histogram.record(value) }
            return histogram
        }
        let group = GroupResult(
            key: GroupKey(flow: "cx", suite: "x25519", provider: "swift-crypto", transport: "in-process"),
            flowKind: "cx",
            insecure: false,
            steps: [
                .keygenServer: histogram(5_000_000, 1),
                .sign: histogram(100_000, exchanges),
                .verify: histogram(50_000, exchanges),
                .encode: histogram(40_000, exchanges),
                .exchange: histogram(200_000, exchanges),
            ],
            iterations: UInt64(exchanges)
        )
        return RunResult(
            metadata: RunMetadata(
                scenario: "bound",
                startedAt: Date(timeIntervalSince1970: 0),
                build: "release",
                machine: MachineInfo(hostname: "h", cpu: "c", cores: cores, memoryBytes: 1, os: "o", kernel: "k"),
                providers: [],
                transport: "in-process, server in this process",
                clients: clients,
                load: "closed",
                command: ""
            ),
            scenarioText: "",
            groups: [group],
            measuredNanoseconds: UInt64(seconds * 1e9),
            totalNanoseconds: UInt64(seconds * 1e9),
            plannedIterations: exchanges,
            completedIterations: exchanges,
            warmupIterations: 0,
            stoppedByDeadline: false
        )
    }

    @Test("The bound counts per-exchange primitives only, over min(clients, cores) lanes")
    func bound() throws {
        // 150 µs of primitives per exchange (the set-up key and `encode` are not counted):
        // 2 lanes allow 13,333/s; 12,000 in 1 s is 90%.
        let result = Self.result(clients: 8, cores: 2, exchanges: 12_000, seconds: 1)
        let bound = try #require(PrimitiveBound(result))
        #expect(bound.lanes == 2)
        #expect(abs(bound.primitiveNanoseconds - 150_000) < 150)
        #expect(abs(bound.bound - 13_333.3) < 20)
        #expect(abs(bound.efficiency - 0.9) < 0.002)
        // One client is one lane, whatever the cores.
        #expect(PrimitiveBound(Self.result(clients: 1, cores: 8, exchanges: 6_000, seconds: 1))?.lanes == 1)
        // A server elsewhere spends another machine's time: no bound.
        var remote = result
        remote.metadata.transport = "tcp, server at 10.0.0.2:7000"
        #expect(PrimitiveBound(remote) == nil)
    }

    @Test("efficiency: a percentage of the bound; anything else is refused with what was expected")
    func threshold() throws {
        let flows: [String: [Step]] = ["cx": [.sign, .verify, .exchange]]
        let threshold = try Threshold.parse(metric: "efficiency", condition: ">= 90%", flows: flows).get()
        let met = threshold.evaluate(Self.result(clients: 2, cores: 2, exchanges: 12_600, seconds: 1))
        #expect(met.passed)
        #expect(met.observed == "94.5%")
        let missed = threshold.evaluate(Self.result(clients: 2, cores: 2, exchanges: 10_000, seconds: 1))
        #expect(!missed.passed)
        #expect(missed.observed == "75%")
        guard case .failure(let problem) = Threshold.parse(metric: "efficiency", condition: ">= 0.9", flows: flows)
        else {
            Issue.record("a bare number was accepted")
            return
        }
        #expect(problem.message.contains("expected a share of the primitive bound such as \">= 90%\""))
    }
}
