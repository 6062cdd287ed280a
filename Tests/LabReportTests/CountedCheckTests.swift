import Foundation
import Histogram
import LabAnalysis
import LabCore
import LabReport
import LabResults
import LabTestSupport
import Testing

/// `lab check` on counted runs, on hand-made counts: what is flagged, what is allowed, and
/// what cannot be compared.
@Suite(.tier(.unit)) struct CountedCheckTests {
    static let key = GroupKey(flow: "cx", suite: "x25519", provider: "swift-crypto", transport: "in-process")

    /// A counted run: `steps` maps a step to its samples' instruction counts.
    static func run(_ steps: [Step: [UInt64]], counter: String? = "instructions (callgrind, valgrind-3.19.0)") -> RunResult {
        var group = GroupResult(key: Self.key, flowKind: "cx", insecure: false)
        for (step, counts) in steps {
            var histogram = Histogram<UInt64>(numberOfSignificantValueDigits: .three)
            var detail = StepDetail()
            for count in counts {
                histogram.record(count / 100)
                detail.record(StepSample(nanoseconds: count / 100, instructions: count, allocations: 3))
            }
            group.steps[step] = histogram
            group.details[step] = detail
        }
        var metadata = RunMetadata(
            scenario: "ci-gate",
            startedAt: Date(timeIntervalSince1970: 0),
            build: "debug",
            machine: MachineInfo(hostname: "h", cpu: "c", cores: 2, memoryBytes: 1, os: "o", kernel: "k"),
            providers: [ProviderInfo(name: "swift-crypto", version: "4")],
            transport: "in-process",
            clients: 1,
            load: "closed",
            command: "lab run --counted"
        )
        metadata.counter = counter
        return RunResult(
            metadata: metadata,
            scenarioText: "",
            groups: [group],
            measuredNanoseconds: 1,
            totalNanoseconds: 1,
            plannedIterations: 10,
            completedIterations: 10,
            warmupIterations: 0,
            stoppedByDeadline: false
        )
    }

    /// Ten samples around `median`: the first call's extra work in the first.
    static func samples(_ median: UInt64) -> [UInt64] {
        [median + median / 50] + Array(repeating: median, count: 9)
    }

    static func verdicts(_ check: CountedCheck) -> [String: CountedCheck.Verdict] {
        Dictionary(uniqueKeysWithValues: check.rows.map { ($0.step, $0.verdict) })
    }

    @Test("The same counts: nothing flagged, and the baseline's figure is the median of its processes' medians")
    func unchanged() throws {
        let baselines = [100_000, 100_200, 99_900].map { Self.run([.decode: Self.samples(UInt64($0))]) }
        let check = try CountedCheck(run: Self.run([.decode: Self.samples(100_000)]), baselines: baselines)
        let row = try #require(check.rows.first)
        #expect(row.baseline == 100_000 && row.run == 100_000 && row.ratio == 1)
        #expect(abs(row.spread - 0.002) < 1e-12 && abs(row.allowance - 0.0065) < 1e-12)
        #expect(row.samples == (30, 10) && row.allocations == (3, 3))
        #expect(check.regressions.isEmpty && row.verdict == .unchanged)
    }

    @Test("1% more in one step is flagged, naming it alone; 1% less is said too, and is no regression")
    func moreWork() throws {
        let baseline = Self.run([.decode: Self.samples(200_000), .sign: Self.samples(2_500_000)])
        let slower = try CountedCheck(
            run: Self.run([.decode: Self.samples(202_000), .sign: Self.samples(2_500_000)]),
            baselines: [baseline]
        )
        #expect(Self.verdicts(slower) == ["decode": .more, "sign": .unchanged])
        #expect(slower.regressions.map(\.step) == ["decode"])
        let report = CountedCheckReport(slower, baseline: "b", run: "r")
        #expect(report.summary().hasPrefix("REGRESSION in 1 of 2 counted steps: cx x25519 swift-crypto · decode ×1.0100"))
        #expect(report.csv().contains(",decode,200000.0,202000.0,1.01000,"))
        let faster = try CountedCheck(
            run: Self.run([.decode: Self.samples(198_000), .sign: Self.samples(2_500_000)]),
            baselines: [baseline]
        )
        #expect(Self.verdicts(faster)["decode"] == .less && faster.regressions.isEmpty)
        // Within the floor (0.25%): unchanged.
        let within = try CountedCheck(
            run: Self.run([.decode: Self.samples(200_400), .sign: Self.samples(2_505_000)]),
            baselines: [baseline]
        )
        #expect(Self.verdicts(within) == ["decode": .unchanged, "sign": .unchanged])
    }

    @Test("A step whose baselines spread (random keys) is allowed twice its spread beyond the floor")
    func spreadWidens() throws {
        let baselines = [4_200_000, 4_284_000, 4_242_000].map { Self.run([.verify: Self.samples(UInt64($0))]) }
        // Spread: 42,000 / 4,242,000 ≈ 0.99%; allowance ≈ 0.25% + 2 × 0.99% ≈ 2.23%.
        let within = try CountedCheck(run: Self.run([.verify: Self.samples(4_320_000)]), baselines: baselines)
        #expect(Self.verdicts(within)["verify"] == .unchanged)
        let beyond = try CountedCheck(run: Self.run([.verify: Self.samples(4_340_000)]), baselines: baselines)
        #expect(Self.verdicts(beyond)["verify"] == .more)
    }

    @Test("Baselines all counted at one heap layout are named as such; ones over several layouts are not")
    func oneLayoutNoted() throws {
        func baselines(_ layouts: [Int?]) -> [RunResult] {
            layouts.map { layout in
                var result = Self.run([.decrypt: Self.samples(19_500)])
                result.metadata.heapLayout = layout
                return result
            }
        }
        let run = Self.run([.decrypt: Self.samples(19_500)])
        let one = try CountedCheck(run: run, baselines: baselines([nil, nil, nil]))
        #expect(one.notes.contains { $0.hasPrefix("The baselines were all counted at one heap layout") }, "\(one.notes)")
        let several = try CountedCheck(run: run, baselines: baselines([nil, 1, 2]))
        #expect(!several.notes.contains { $0.contains("heap layout") }, "\(several.notes)")
        // One baseline says nothing of spread at all: no note.
        #expect(try CountedCheck(run: run, baselines: baselines([nil])).notes.isEmpty)
    }

    @Test("A small step must move by 150 instructions; 1% of a step of 17,646 or 20,000 is caught")
    func minimumChange() throws {
        let baseline = Self.run([.keygenSession: Self.samples(1_208)])
        // Where buffers fall moved x25519 `encrypt` by 107 instructions: not a regression.
        let bookkeeping = try CountedCheck(run: Self.run([.keygenSession: Self.samples(1_315)]), baselines: [baseline])
        #expect(Self.verdicts(bookkeeping)["keygen.session"] == .unchanged)
        let real = try CountedCheck(run: Self.run([.keygenSession: Self.samples(1_360)]), baselines: [baseline])
        #expect(Self.verdicts(real)["keygen.session"] == .more)
        // The release build's `decode`, about 17,600 instructions: 1% more (176) is caught.
        let decode = try CountedCheck(
            run: Self.run([.decode: Self.samples(17_822)]),
            baselines: [Self.run([.decode: Self.samples(17_646)])]
        )
        #expect(Self.verdicts(decode)["decode"] == .more)
        let twenty = try CountedCheck(
            run: Self.run([.encode: Self.samples(20_200)]),
            baselines: [Self.run([.encode: Self.samples(20_000)])]
        )
        #expect(Self.verdicts(twenty)["encode"] == .more)
    }

    @Test("Fewer than 5 samples (a per-run key) are reported, never judged")
    func tooFewSamples() throws {
        let check = try CountedCheck(
            run: Self.run([.keygenServer: [9_000_000]]),
            baselines: [Self.run([.keygenServer: [3_000_000]])]
        )
        #expect(Self.verdicts(check)["keygen.server"] == .tooFewSamples && check.regressions.isEmpty)
    }

    @Test("A timed run, or another build, cannot be checked against counted baselines")
    func refusesWhatDoesNotCompare() throws {
        let counted = Self.run([.decode: Self.samples(1_000)])
        #expect(throws: LabError.self) {
            try CountedCheck(run: Self.run([.decode: Self.samples(1_000)], counter: nil), baselines: [counted])
        }
        var release = counted
        release.metadata.build = "release"
        #expect(throws: LabError.self) { try CountedCheck(run: release, baselines: [counted]) }
    }

    @Test("results.json keeps each step's preemption, CPU times and counts")
    func documentRoundTrip() throws {
        var result = Self.run([.sign: Self.samples(2_575_297)])
        result.metadata.heapLayout = 3
        var detail = result.groups[0].details[.sign]!
        detail.record(StepSample(nanoseconds: 4_000_000, cpuNanoseconds: 60_000, preempted: true, instructions: 2_575_297))
        result.groups[0].details[.sign] = detail
        let data = try result.jsonData()
        let back = try RunResult.decode(data)
        let kept = try #require(back.groups.first?.details[.sign])
        #expect(kept.preempted == 1)
        #expect(kept.unpreempted == detail.unpreempted && kept.unpreempted.totalCount == 10)
        #expect(kept.cpu?.totalCount == 1 && kept.cpu == detail.cpu)
        #expect(kept.counts == detail.counts && kept.counts?.instructions.count == 11)
        #expect(back.metadata.counter == result.metadata.counter)
        #expect(back.metadata.heapLayout == 3)
    }
}
