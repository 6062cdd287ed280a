import Foundation
import Histogram
import LabAnalysis
import LabCharts
import LabCore
import LabReport
import LabResults
import LabTestSupport
import SwiftCSV
import Testing

#if canImport(FoundationXML)
import FoundationXML
#endif

/// `Comparison`'s statistics and verdicts on histograms made to order, checked against SciPy.
@Suite(.tier(.unit)) struct ComparisonTests {
    /// `comparison.csv`'s header as docs/several-hosts.md documents it, spelled out so that a change to
    /// the columns is a test failure.
    static let documentedHeader =
        "flow,suite,provider,transport,step,run,role,count,p50_us,p99_us,ops_per_s,p50_ratio,p99_ratio,ops_ratio,"
        + "p_value,verdict,relative_ratio,floor,run_factor,measure,note"

    /// A seeded generator, so every histogram here is the same on every run.
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            self.state &+= 0x9E37_79B9_7F4A_7C15
            var z = self.state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// `count` samples around `median` nanoseconds, skewed right like step timings.
    static func timings(_ count: Int, median: Double, seed: UInt64, scale: Double = 1) -> Histogram<UInt64> {
        var random = Generator(state: seed)
        var histogram = Histogram<UInt64>(numberOfSignificantValueDigits: .three)
        for _ in 0..<count {
            let u = Double.random(in: 0.0001..<1, using: &random)
            let v = Double.random(in: 0.0001..<1, using: &random)
            let normal = (-2 * log(u)).squareRoot() * cos(2 * .pi * v)
            histogram.record(UInt64(median * scale * exp(0.15 * normal)))
        }
        return histogram
    }

    static func run(
        _ label: String,
        _ steps: [Step: Histogram<UInt64>],
        transport: String = "in-process"
    ) -> Comparison.Run {
        let key = GroupKey(flow: "cx", suite: "x25519", provider: "swift-crypto", transport: transport)
        let result = RunResult(
            metadata: RunMetadata(
                scenario: "t",
                startedAt: Date(timeIntervalSince1970: 0),
                build: "debug",
                machine: MachineInfo(hostname: "h", cpu: "c", cores: 2, memoryBytes: 1, os: "o", kernel: "k"),
                providers: [],
                transport: transport,
                clients: 1,
                load: "closed",
                command: ""
            ),
            scenarioText: "",
            groups: [GroupResult(key: key, flowKind: "cx", insecure: false, steps: steps, iterations: 2000)],
            measuredNanoseconds: 1_000_000_000,
            totalNanoseconds: 1_000_000_000,
            plannedIterations: 2000,
            completedIterations: 2000,
            warmupIterations: 0,
            stoppedByDeadline: false
        )
        return Comparison.Run(label: label, result: result)
    }

    @Test("The U test agrees with SciPy's mannwhitneyu (asymptotic, tie-corrected) on bucketed samples")
    func mannWhitneyMatchesSciPy() async throws {
        let pairs: [(Histogram<UInt64>, Histogram<UInt64>)] = [
            (Self.timings(400, median: 20_000, seed: 1), Self.timings(500, median: 20_000, seed: 2)),
            (Self.timings(300, median: 20_000, seed: 3), Self.timings(300, median: 20_000, seed: 4, scale: 1.04)),
            (Self.timings(50, median: 900, seed: 5), Self.timings(60, median: 900, seed: 6, scale: 0.9)),
        ]
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mw-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        // Each sample as the value the test ranks it by: its bucket's highest equivalent value.
        func samples(_ histogram: Histogram<UInt64>) -> [UInt64] {
            histogram.recordedValues().flatMap { bucket in
                Array(repeating: histogram.highestEquivalentForValue(bucket.value), count: Int(bucket.count))
            }
        }
        let input = try JSONSerialization.data(withJSONObject: pairs.map { [samples($0.0), samples($0.1)] })
        try input.write(to: folder.appendingPathComponent("pairs.json"))
        let script = """
            import json, sys
            from scipy.stats import mannwhitneyu
            for a, b in json.load(open(sys.argv[1])):
                r = mannwhitneyu(b, a, alternative="two-sided", method="asymptotic", use_continuity=False)
                print(json.dumps([float(r.statistic), float(r.pvalue)]))
            """
        let outcome = try await ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["python3", "-c", script, folder.appendingPathComponent("pairs.json").path]
        )
        #expect(outcome.status == 0, "\(outcome.errors)")
        let answers = outcome.output.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [Double]
        }
        #expect(answers.count == pairs.count)
        for ((first, second), answer) in zip(pairs, answers) {
            let test = RankSumTest(first, second)
            #expect(test.u == answer[0], "U")
            #expect(
                abs(test.twoSidedPValue - answer[1]) <= 1e-9 + 1e-6 * answer[1],
                "p: \(test.twoSidedPValue) vs SciPy \(answer[1])"
            )
        }
        // The pairs span the verdicts' cases: no shift, a small significant one, a real one.
        #expect(answers.map { $0[1] < 0.001 } == [false, true, true])
    }

    @Test("Verdicts: noise is no change, a small significant shift is within the floor, 25% is flagged")
    func verdicts() {
        let base = Self.run(
            "base",
            [
                .encrypt: Self.timings(2000, median: 300_000, seed: 10),
                .sign: Self.timings(2000, median: 250_000, seed: 11),
                .verify: Self.timings(2000, median: 120_000, seed: 12),
                .keygenServer: Self.timings(1, median: 80_000, seed: 13),
                .decrypt: Self.timings(2000, median: 300_000, seed: 14),
            ]
        )
        let candidate = Self.run(
            "candidate",
            [
                .encrypt: Self.timings(2000, median: 300_000, seed: 20, scale: 1.25),
                .sign: Self.timings(2000, median: 250_000, seed: 21),
                .verify: Self.timings(2000, median: 120_000, seed: 22, scale: 1.05),
                .keygenServer: Self.timings(1, median: 80_000, seed: 23, scale: 0.5),
            ]
        )
        let comparison = Comparison(baseline: base, candidates: [candidate])
        let verdicts = Dictionary(uniqueKeysWithValues: comparison.rows.map { ($0.step, $0.cells[0]) })
        #expect(verdicts[.encrypt]?.verdict == .slower)
        #expect(verdicts[.sign]?.verdict == .noChange)
        // 5% with 2,000 samples each is significant, yet inside the 10% floor.
        #expect(verdicts[.verify]?.verdict == .noChange)
        #expect((verdicts[.verify]?.pValue ?? 1) < 0.001)
        #expect(verdicts[.keygenServer]?.verdict == .tooFewSamples)
        #expect(verdicts[.decrypt]?.verdict == .missing)
        #expect(comparison.changes(candidate: 0).map(\.step) == [.encrypt])
        // Three steps, one of them 25% off: they did not move together, so no common factor.
        #expect(comparison.common[0].applies == false)
        #expect(comparison.common[0].factor == 1)
        // The same, the other way round: faster.
        let reverse = Comparison(baseline: candidate, candidates: [base])
        #expect(reverse.changes(candidate: 0).map { "\($0.step)/\($0.cells[0].verdict)" } == ["encrypt/faster"])
        // A lower floor takes the 5% shift as a change.
        let strict = Comparison(baseline: base, candidates: [candidate], threshold: 0.02)
        #expect(Set(strict.changes(candidate: 0).map(\.step)) == [.encrypt, .verify])
    }

    @Test("A step of two modes whose p50 jumps from one to the other is no change; the whole distribution shifted is")
    func twoModes() {
        // ML-DSA signing's rejection loop gives a step several modes; a p50 near the middle
        // falls in one or the other as their shares move by a point or two.
        func modes(_ share: Double, seed: UInt64, scale: Double = 1) -> Histogram<UInt64> {
            var histogram = Self.timings(Int(40_000 * share), median: 1_000_000, seed: seed, scale: scale)
            histogram.add(Self.timings(40_000 - Int(40_000 * share), median: 2_000_000, seed: seed + 1, scale: scale))
            return histogram
        }
        let base = Self.run("base", [.sign: modes(0.49, seed: 30), .encrypt: Self.timings(2000, median: 300_000, seed: 31)])
        let jumped = Self.run("jumped", [.sign: modes(0.52, seed: 40), .encrypt: Self.timings(2000, median: 300_000, seed: 41)])
        let comparison = Comparison(baseline: base, candidates: [jumped])
        let sign = comparison.rows.first { $0.step == .sign }!.cells[0]
        // The p50 moved by more than the floor, significantly, and the distribution did not.
        #expect((sign.p50Ratio ?? 1) < 0.9 && (sign.pValue ?? 1) < 0.001, "\(sign)")
        #expect(abs(log(sign.shiftRatio ?? 0)) < log(1.05), "\(sign)")
        #expect(sign.verdict == .noChange)
        // Every sample 15% slower: flagged, with the p50's ratio.
        let slowed = Self.run("slowed", [.sign: modes(0.49, seed: 50, scale: 1.15), .encrypt: Self.timings(2000, median: 300_000, seed: 51)])
        let slower = Comparison(baseline: base, candidates: [slowed]).rows.first { $0.step == .sign }!.cells[0]
        #expect(slower.verdict == .slower && slower.moves.first?.ratio == slower.p50Ratio, "\(slower)")
    }

    @Test("A short step (under 100 µs) is held to the wider floor: 15% is noise there, 40% is not")
    func shortSteps() {
        let base = Self.run(
            "base",
            [
                .encrypt: Self.timings(2000, median: 20_000, seed: 40),
                .decrypt: Self.timings(2000, median: 20_000, seed: 41),
                .sign: Self.timings(2000, median: 250_000, seed: 42),
            ]
        )
        let candidate = Self.run(
            "candidate",
            [
                .encrypt: Self.timings(2000, median: 20_000, seed: 50, scale: 1.15),
                .decrypt: Self.timings(2000, median: 20_000, seed: 51, scale: 1.4),
                .sign: Self.timings(2000, median: 250_000, seed: 52, scale: 1.15),
            ]
        )
        let comparison = Comparison(baseline: base, candidates: [candidate], commonShare: 2)
        let cells = Dictionary(uniqueKeysWithValues: comparison.rows.map { ($0.step, $0.cells[0]) })
        #expect(cells[.encrypt]?.floor == 0.25)
        #expect(cells[.sign]?.floor == 0.10)
        #expect(cells[.encrypt]?.verdict == .noChange, "15% in a 20 µs step")
        #expect(cells[.decrypt]?.verdict == .slower, "40% in a 20 µs step")
        #expect(cells[.sign]?.verdict == .slower, "15% in a 250 µs step")
        // The floors reach the CSV.
        let csv = ComparisonReport(comparison).csv()
        #expect(csv.contains(",0.25,1.0000,time,"))
        #expect(csv.contains(",0.10,1.0000,time,"))
    }

    /// Eight steps of 100–900 µs, each ×`scales[i]` in the candidate.
    static func eightSteps(
        _ label: String,
        seed: UInt64,
        scales: [Double] = Array(repeating: 1, count: 8)
    ) -> Comparison.Run {
        let steps: [Step] = [.keygenSession, .encode, .decode, .wrap, .unwrap, .encrypt, .sign, .verify]
        var histograms: [Step: Histogram<UInt64>] = [:]
        for (index, step) in steps.enumerated() {
            histograms[step] = Self.timings(
                1500,
                median: Double(100_000 + 100_000 * index),
                seed: seed + UInt64(index),
                scale: scales[index]
            )
        }
        return Self.run(label, histograms)
    }

    @Test("A run that moved as a whole: its common factor is a verdict, and the one step that moved more stands out")
    func commonFactor() {
        let base = Self.eightSteps("base", seed: 60)
        // A busy machine: every step ×1.18 give or take 3%, and encrypt 25% more on top.
        let busy = Self.eightSteps("busy", seed: 70, scales: [1.2, 1.16, 1.18, 1.21, 1.15, 1.18 * 1.25, 1.19, 1.17])
        let comparison = Comparison(baseline: base, candidates: [busy])
        let common = comparison.common[0]
        #expect(common.applies)
        #expect(abs(common.median - 1.18) < 0.03, "×\(common.median)")
        #expect(common.together == 7 && common.steps == 8)
        #expect(common.verdict == .slower)
        #expect(comparison.changes(candidate: 0).map(\.step) == [.encrypt])
        let encrypt = comparison.rows.first { $0.step == .encrypt }?.cells[0]
        #expect(abs((encrypt?.relativeRatio ?? 0) - 1.25) < 0.05)
        #expect(comparison.isSlower(candidate: 0))
        let markdown = ComparisonReport(comparison).markdown()
        #expect(markdown.contains("**busy**: 🔴 **1 slower** of the 8 steps judged; 🔴 **slower as a whole**: common factor ×1.1"), "\(markdown)")
        // Judged by its own ratios, every step is slower.
        let absolute = Comparison(baseline: base, candidates: [busy], commonShare: 2)
        #expect(absolute.common[0].applies == false)
        #expect(absolute.changes(candidate: 0).count == 8)
        // A few percent together: within the floor as a whole, and no step flagged.
        let calm = Self.eightSteps("calm", seed: 80, scales: [1.05, 1.03, 1.06, 1.04, 1.02, 1.05, 1.04, 1.03])
        let quiet = Comparison(baseline: base, candidates: [calm])
        #expect(quiet.common[0].applies && quiet.common[0].verdict == .noChange)
        #expect(quiet.changes(candidate: 0).isEmpty)
        #expect(!quiet.isSlower(candidate: 0))
    }

    @Test("Half the steps 30% slower (one provider changed) is no common move: those steps are flagged, the rest not")
    func halfTheSteps() {
        let base = Self.eightSteps("base", seed: 90)
        let half = Self.eightSteps("half", seed: 100, scales: [1, 1, 1, 1, 1.3, 1.3, 1.3, 1.3])
        let comparison = Comparison(baseline: base, candidates: [half])
        #expect(comparison.common[0].applies == false)
        #expect(Set(comparison.changes(candidate: 0).map(\.step)) == [.unwrap, .encrypt, .sign, .verify])
        #expect(comparison.changes(candidate: 0).allSatisfy { $0.cells[0].verdict == .slower })
    }

    @Test("Runs over another transport are matched by flow, suite and provider, and the report says so")
    func crossTransportMatch() throws {
        let base = Self.run("loopback", [.sign: Self.timings(500, median: 50_000, seed: 30)], transport: "tcp")
        let other = Self.run(
            "in-process",
            [
                .sign: Self.timings(500, median: 50_000, seed: 31),
                .discover: Self.timings(1, median: 28_000_000, seed: 32),
            ]
        )
        let comparison = Comparison(baseline: base, candidates: [other])
        #expect(comparison.rows.first?.cells[0].verdict == .noChange)
        let report = ComparisonReport(comparison)
        #expect(report.markdown().contains("matched with `cx x25519 swift-crypto in-process` (another transport)"))
        #expect(
            report.markdown().contains("Only in this run: `cx x25519 swift-crypto · discover`"),
            "\(report.markdown())"
        )
        let text = report.csv()
        #expect(text.hasPrefix(Self.documentedHeader + "\n"), "\(text.prefix(300))")
        let csv = try NamedCSV(string: text, delimiter: .comma)
        #expect(csv.rows.count == 2, "a baseline row and a candidate row")
        #expect(csv.rows.map { $0["role"] } == ["baseline", "candidate"])
        for row in csv.rows { #expect(row.count == Self.documentedHeader.split(separator: ",").count) }
        let svg = report.chart(0).render()
        let parser = XMLParser(data: Data(svg.utf8))
        #expect(parser.parse(), "the chart is well-formed XML")
    }
}
