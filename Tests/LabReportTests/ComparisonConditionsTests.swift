import Foundation
import Histogram
import LabAnalysis
import LabCore
import LabReport
import LabResults
import LabTestSupport
import Testing

/// What `Comparison` judges under the runs' conditions (issue 50): a saturated run's
/// exchanges on their work, a machine that changed not at all, ops/s only over intervals,
/// sentences that name the slower side first whichever way the arguments go, a warning
/// when runs differ in more than their code, and a common factor that a slower provider
/// does not fake.
@Suite(.tier(.unit)) struct ComparisonConditionsTests {
    static func key(_ suite: String, _ provider: String) -> GroupKey {
        GroupKey(flow: "cx-\(suite)-\(provider)", suite: suite, provider: provider, transport: "tcp")
    }

    /// A group whose exchange waits `wait` ns beside `work` ns of work; its `sign` takes
    /// `work` / 2 of CPU and wall time.
    static func group(_ key: GroupKey, work: Double, wait: Double, seed: UInt64, count: Int = 1_000) -> GroupResult {
        let workTimes = ComparisonTests.timings(count, median: work, seed: seed)
        let waitTimes = ComparisonTests.timings(count, median: wait, seed: seed &+ 1)
        var exchange = Histogram<UInt64>(numberOfSignificantValueDigits: .three)
        exchange.add(ComparisonTests.timings(count, median: work + wait, seed: seed &+ 2))
        let sign = ComparisonTests.timings(count, median: work / 2, seed: seed &+ 3)
        var group = GroupResult(
            key: key,
            flowKind: "cx",
            insecure: false,
            steps: [.exchange: exchange, .work: workTimes, .waiting: waitTimes, .sign: sign],
            iterations: UInt64(count)
        )
        group.details[.sign] = StepDetail(preempted: 0, unpreempted: sign, cpu: sign, counts: nil)
        return group
    }

    /// A run of `groups`; `saturated`: its process used its two cores; `waiting`: the share
    /// of the cores' time its threads waited for one.
    static func run(
        _ label: String,
        _ groups: [GroupResult],
        saturated: Bool = false,
        waiting: Double = 0.003,
        scenario: String = "s",
        transport: String = "tcp",
        name: String? = nil
    ) -> Comparison.Run {
        var result = RunResult(
            metadata: RunMetadata(
                scenario: scenario,
                startedAt: Date(timeIntervalSince1970: 0),
                build: "release",
                machine: MachineInfo(hostname: "h", cpu: "c", cores: 2, memoryBytes: 1, os: "o", kernel: "k"),
                providers: [],
                transport: transport,
                clients: 200,
                load: "closed, 10 iterations per client",
                command: ""
            ),
            scenarioText: "",
            groups: groups,
            measuredNanoseconds: 1_000_000_000,
            totalNanoseconds: 1_000_000_000,
            plannedIterations: 2_000,
            completedIterations: 2_000,
            warmupIterations: 0,
            stoppedByDeadline: false
        )
        let wall: UInt64 = 1_000_000_000
        let used = saturated ? 1.9 : 0.4
        result.cpu = RunCPU(
            process: ProcessCPU(
                userNanoseconds: UInt64(used * Double(wall)),
                systemNanoseconds: 0,
                waitingNanoseconds: UInt64(waiting * 2 * Double(wall))
            ),
            wallNanoseconds: wall,
            cores: 2,
            iterations: 2_000,
            includesServer: true
        )
        return Comparison.Run(label: label, result: result, name: name)
    }

    static func row(_ comparison: Comparison, _ key: GroupKey, _ step: Step) throws -> Comparison.Row {
        try #require(comparison.rows.first { $0.key == key && $0.step == step })
    }

    @Test("A saturated run: the exchange's time is not judged, its work is, and the report says why and what to change")
    func saturatedRunsAreJudgedOnWork() throws {
        let x25519 = Self.key("x25519", "swift-crypto")
        // Both runs wait 50 ms in the queue; the candidate's work is ×1.7.
        let base = Self.run("base", [Self.group(x25519, work: 300_000, wait: 50_000_000, seed: 1)], saturated: true)
        let slow = Self.run("slow", [Self.group(x25519, work: 510_000, wait: 50_000_000, seed: 11)], saturated: true)
        let comparison = Comparison(baseline: base, candidates: [slow])
        #expect(comparison.conditions.basis == .work)
        #expect(comparison.conditions.exchangeUnjudged)
        #expect(comparison.conditions.reasons.first?.contains("'base' was saturated") == true)
        #expect(comparison.conditions.remedy?.contains("open model") == true)
        let exchange = try Self.row(comparison, x25519, .exchange)
        #expect(exchange.cells[0].verdict == .notJudged, "the queue made the exchange's time")
        let work = try Self.row(comparison, x25519, .work)
        #expect(work.measure == .cpu)
        #expect(work.cells[0].verdict == .slower)
        let sign = try Self.row(comparison, x25519, .sign)
        #expect(sign.measure == .cpu && sign.cells[0].verdict == .slower)
        #expect(try Self.row(comparison, x25519, .waiting).cells[0].verdict == .notJudged)
        // The report's paragraph, and no "no significant change" about the queue.
        let markdown = ComparisonReport(comparison).markdown()
        #expect(markdown.contains("**What is judged.** 'base' was saturated"))
        #expect(markdown.contains("not the exchange's time, which is not judged"))
        let exchangeLine = markdown.split(separator: "\n").first { $0.hasPrefix("| exchange |") } ?? ""
        #expect(exchangeLine.contains("not judged"), "\(exchangeLine)")
    }

    @Test(
        "Saturated runs that did not read their steps' usage: the exchange is not judged, and the remedy names stepUsage"
    )
    func saturatedWithoutWorkCannotTell() throws {
        let x25519 = Self.key("x25519", "swift-crypto")
        func bare(_ seed: UInt64) -> GroupResult {
            var group = Self.group(x25519, work: 300_000, wait: 50_000_000, seed: seed)
            group.steps[.work] = nil
            group.steps[.waiting] = nil
            group.details = [:]
            return group
        }
        let comparison = Comparison(
            baseline: Self.run("a", [bare(1)], saturated: true),
            candidates: [Self.run("b", [bare(21)], saturated: true)]
        )
        #expect(comparison.conditions.basis == .time)
        #expect(comparison.conditions.exchangeUnjudged)
        #expect(comparison.conditions.remedy?.contains("stepUsage") == true)
        #expect(try Self.row(comparison, x25519, .exchange).cells[0].verdict == .notJudged)
    }

    @Test("A run whose threads waited for a core 30 points longer is not judged at all, and says so with both figures")
    func machineThatChangedIsNotJudged() throws {
        let x25519 = Self.key("x25519", "swift-crypto")
        // The candidate is ×1.5 slower in everything: what a busy neighbour does.
        let quiet = Self.run("quiet", [Self.group(x25519, work: 300_000, wait: 10_000, seed: 1)], waiting: 0.003)
        let busy = Self.run("busy", [Self.group(x25519, work: 450_000, wait: 15_000, seed: 31)], waiting: 0.37)
        let comparison = Comparison(baseline: quiet, candidates: [busy])
        let reason = try #require(comparison.machineChanged[0])
        #expect(reason.contains("0.3%") && reason.contains("37%"), "\(reason)")
        #expect(comparison.isUnjudged(candidate: 0))
        #expect(!comparison.isSlower(candidate: 0))
        #expect(comparison.rows.allSatisfy { $0.cells[0].verdict == .notJudged || $0.cells[0].verdict == .missing })
        #expect(ComparisonReport(comparison).markdown().contains("⚠️ **not judged**: the machine changed"))
        // The same candidate waiting as little as the baseline is judged, and slower.
        let alike = Self.run("alike", [Self.group(x25519, work: 450_000, wait: 15_000, seed: 31)], waiting: 0.02)
        let judged = Comparison(baseline: quiet, candidates: [alike])
        #expect(judged.machineChanged[0] == nil)
        #expect(judged.isSlower(candidate: 0))
    }

    @Test("A sentence names the slower side first, the same words whichever run is the baseline")
    func sentencesNameTheSlowerSideFirst() throws {
        let x25519 = Self.key("x25519", "swift-crypto")
        let fast = Self.run(
            "R#{provider=swift-crypto}",
            [Self.group(x25519, work: 300_000, wait: 10_000, seed: 1)],
            name: "swift-crypto"
        )
        let slow = Self.run(
            "R#{provider=openssl}",
            [Self.group(x25519, work: 530_000, wait: 10_000, seed: 41)],
            name: "openssl"
        )
        func sentence(_ comparison: Comparison) throws -> String {
            try #require(comparison.sentence(try Self.row(comparison, x25519, .work), candidate: 0))
        }
        var forward = Comparison(baseline: fast, candidates: [slow], commonShare: 2)
        forward.across = ["provider"]
        var backward = Comparison(baseline: slow, candidates: [fast], commonShare: 2)
        backward.across = ["provider"]
        let one = try sentence(forward)
        let other = try sentence(backward)
        #expect(one.hasPrefix("openssl ×1.7") || one.hasPrefix("openssl ×1.8"), "\(one)")
        #expect(other.hasPrefix("openssl ×"), "reversed: \(other)")
        #expect(one == other, "the same verdict in the same words: \(one) / \(other)")
        // With the provider across, the row label does not carry the baseline's provider.
        #expect(one.contains("cx x25519 tcp · exchange.work"), "\(one)")
        #expect(!one.contains("swift-crypto ·"), "\(one)")
    }

    @Test("ops/s is judged only over whole intervals: one rate per run is not a sample")
    func throughputNeedsIntervals() throws {
        let x25519 = Self.key("x25519", "swift-crypto")
        func withRates(_ run: Comparison.Run, _ perInterval: [UInt64]) -> Comparison.Run {
            var run = run
            var intervals = RunIntervals(width: 100_000_000, origin: Date(timeIntervalSince1970: 0))
            var slices: [Int: RunIntervals.Slice] = [:]
            for (index, count) in perInterval.enumerated() {
                var histogram = RunIntervals.histogram()
                for _ in 0..<count { histogram.record(100_000) }
                slices[index] = RunIntervals.Slice(steps: [.exchange: SparseHistogram(histogram)], completed: count)
            }
            intervals.groups[x25519] = slices
            run.result.intervals = intervals
            return run
        }
        // Half the exchanges in the candidate, the same latencies: only ops/s can move.
        var base = Self.group(x25519, work: 300_000, wait: 10_000, seed: 1)
        var half = Self.group(x25519, work: 300_000, wait: 10_000, seed: 1)
        base.steps[.work] = nil
        half.steps[.work] = nil
        let one = Self.run("one", [base])
        var other = Self.run("other", [half])
        other.result.measuredNanoseconds = 2_000_000_000
        let single = Comparison(baseline: one, candidates: [other])
        let exchange = try Self.row(single, x25519, .exchange).cells[0]
        #expect(!exchange.moves.contains { $0.figure == .ops }, "one rate each: not judged")
        #expect(exchange.note?.hasPrefix("ops/s not judged") == true, "\(exchange.note ?? "")")
        let twenty = Array(repeating: UInt64(100), count: 20)
        let ten = (0..<20).map { UInt64(48 + $0 % 5) }
        let judged = Comparison(baseline: withRates(one, twenty), candidates: [withRates(other, ten)])
        let cell = try Self.row(judged, x25519, .exchange).cells[0]
        #expect(cell.moves.contains { $0.figure == .ops && $0.slower }, "\(cell.moves)")
        let same = Comparison(baseline: withRates(one, twenty), candidates: [withRates(other, twenty)])
        #expect(!(try Self.row(same, x25519, .exchange).cells[0].moves.contains { $0.figure == .ops }))
    }

    @Test("Runs that differ in scenario and transport: the report warns first, naming each difference")
    func differencesAreNamed() throws {
        let x25519 = Self.key("x25519", "swift-crypto")
        let a = Self.run(
            "a",
            [Self.group(x25519, work: 300_000, wait: 10_000, seed: 1)],
            scenario: "quickstart",
            transport: "in-process"
        )
        let b = Self.run(
            "b",
            [Self.group(x25519, work: 300_000, wait: 10_000, seed: 2)],
            scenario: "loopback",
            transport: "tcp"
        )
        let comparison = Comparison(baseline: a, candidates: [b])
        #expect(
            comparison.differences(candidate: 0) == [
                "scenario: quickstart vs loopback", "transport: in-process vs tcp",
            ]
        )
        let markdown = ComparisonReport(comparison).markdown()
        let warning = try #require(markdown.split(separator: "\n").first { $0.contains("Not like for like") })
        #expect(warning.contains("transport: in-process vs tcp"))
        #expect(markdown.range(of: "Not like for like")!.lowerBound < markdown.range(of: "## Verdicts")!.lowerBound)
        #expect(ComparisonReport(comparison).terminal().contains("warning: not like for like"))
        #expect(Comparison(baseline: a, candidates: [a]).differences(candidate: 0).isEmpty)
    }

    @Test("Three of six groups 15% slower: no common factor hides them; all six ×1.2: one factor, no step flagged")
    func slowerProviderIsNotACommonFactor() throws {
        let groups = ["x25519", "rsa-modern", "classic"].flatMap { suite in
            ["swift-crypto", "openssl"].map { Self.key(suite, $0) }
        }
        func run(_ label: String, seed: UInt64, scale: (GroupKey) -> Double) -> Comparison.Run {
            Self.run(
                label,
                groups.enumerated().map { index, key in
                    Self.group(key, work: 300_000 * scale(key), wait: 10_000, seed: seed &+ UInt64(index) * 7)
                }
            )
        }
        let base = run("base", seed: 100) { _ in 1 }
        let slowed = run("slowed", seed: 200) { $0.provider == "openssl" ? 1.15 : 1 }
        let comparison = Comparison(baseline: base, candidates: [slowed])
        #expect(!comparison.common[0].applies, "\(comparison.common[0])")
        for key in groups {
            let verdict = try Self.row(comparison, key, .work).cells[0].verdict
            #expect(verdict == (key.provider == "openssl" ? .slower : .noChange), "\(key): \(verdict)")
        }
        let shifted = run("shifted", seed: 300) { _ in 1.2 }
        let whole = Comparison(baseline: base, candidates: [shifted])
        #expect(whole.common[0].applies && whole.common[0].unit == "groups' work", "\(whole.common[0])")
        #expect(whole.common[0].verdict == .slower)
        #expect(whole.changes(candidate: 0).isEmpty, "\(whole.changes(candidate: 0).map(\.step.name))")
    }

    @Test(
        "Reference operations 10% apart at both ends of the runs, or merged parts' apart by the rank-sum test: the machine changed speed, nothing judged"
    )
    func calibrationThatMovedIsAChangedMachine() throws {
        let x25519 = Self.key("x25519", "swift-crypto")
        func calibrated(_ label: String, _ units: [Double], seed: UInt64, work: Double = 300_000) -> Comparison.Run {
            var run = Self.run(label, [Self.group(x25519, work: work, wait: 10_000, seed: seed)])
            // AES fixed, RSA sign scaled so that each sample's unit is as given.
            run.result.calibration = Calibration(
                provider: "openssl",
                samples: units.map {
                    CalibrationSample(rsaSign: UInt64($0 * $0 / 12_000), rsaVerify: 21_000, aesCBC16K: 12_000)
                }
            )
            return run
        }
        let steady = calibrated("steady", [63_000, 63_400], seed: 1)
        let slowHost = calibrated("slow-host", [69_500, 69_300], seed: 51, work: 450_000)
        let between = Comparison(baseline: steady, candidates: [slowHost])
        #expect(
            between.machineChanged[0]?.contains("ran at another speed") == true,
            "\(between.machineChanged[0] ?? "nil")"
        )
        #expect(between.isUnjudged(candidate: 0))
        #expect(between.machineChanged[0]?.contains("×1.10), 63.4 µs and 69.3 µs at their end (×1.09)") == true)
        // The last samples 8% apart, the first alike: one sample is a moment of the host, not
        // a changed machine (first samples of runs 10 s apart moved ×0.89 while the work held).
        let moving = calibrated("moving", [63_000, 68_500], seed: 61)
        #expect(Comparison(baseline: steady, candidates: [moving]).machineChanged[0] == nil)
        // Both ends 6% apart, opposite ways: the moments again.
        let crossing = calibrated("crossing", [59_300, 67_300], seed: 62)
        #expect(Comparison(baseline: steady, candidates: [crossing]).machineChanged[0] == nil)
        // Merged parts (six samples each): the medians, when the rank-sum test tells them apart.
        let partsA = calibrated("parts-a", [67_000, 64_000, 59_400, 64_100, 63_200, 55_600], seed: 63)
        let partsB = calibrated("parts-b", [59_400, 63_800, 63_200, 60_700, 59_300, 59_700], seed: 64)
        #expect(
            Comparison(baseline: partsA, candidates: [partsB]).machineChanged[0] == nil,
            "medians 5.3% apart, samples overlapping (measured, 2026-11-28)"
        )
        let partsSlow = calibrated("parts-slow", [68_900, 70_100, 69_500, 71_000, 69_800, 70_400], seed: 65)
        let slowParts = Comparison(baseline: partsB, candidates: [partsSlow])
        #expect(slowParts.machineChanged[0]?.contains("medians of 6 and 6 samples") == true, "\(slowParts.machineChanged[0] ?? "nil")")
        // Both runs slower at their end alike (the host's clock after a busy second): not a change.
        let sameDrop = Comparison(
            baseline: calibrated("a", [63_000, 74_000], seed: 81),
            candidates: [calibrated("b", [63_500, 74_800], seed: 82)]
        )
        #expect(sameDrop.machineChanged[0] == nil, "\(sameDrop.machineChanged[0] ?? "")")
        // Judged anyway on request, and still said.
        let anyway = Comparison(baseline: steady, candidates: [slowHost], despiteMachineChange: true)
        #expect(!anyway.isUnjudged(candidate: 0) && anyway.isSlower(candidate: 0))
        #expect(ComparisonReport(anyway).markdown().contains("judged anyway (`--despite-machine-change`)"))
        // Within 5% both ways: judged.
        let alike = calibrated("alike", [63_900, 64_500], seed: 71)
        #expect(Comparison(baseline: steady, candidates: [alike]).machineChanged[0] == nil)
    }

    @Test(
        "A results.json's scenario and label with <script> and ESC: shown as text in comparison.md and on the terminal, never obeyed"
    )
    func hostileNamesAreText() throws {
        let x25519 = Self.key("x25519", "swift-crypto")
        let hostile = "<script>alert(1)</script>\u{1B}]0;pwned\u{07}"
        let a = Self.run("a", [Self.group(x25519, work: 300_000, wait: 10_000, seed: 1)], scenario: hostile)
        let b = Self.run(hostile, [Self.group(x25519, work: 600_000, wait: 10_000, seed: 2)], scenario: "other")
        let report = ComparisonReport(Comparison(baseline: a, candidates: [b]))
        let markdown = report.markdown()
        #expect(!markdown.contains("<script"), "\(markdown)")
        #expect(!markdown.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 })
        #expect(markdown.contains("&lt;script&gt;alert(1)&lt;/script&gt;U+001B&#93;0;pwnedU+0007"))
        let terminal = MarkdownReporter.printable(report.terminal())
        #expect(!terminal.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 })
        #expect(terminal.contains("\\u{001B}]0;pwned\\u{0007}"))
    }
}
