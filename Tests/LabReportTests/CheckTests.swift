import Foundation
import LabAnalysis
import LabCore
import LabReport
import LabResults
import LabTestSupport
import Testing

/// `lab check`'s statistics and verdicts on rounds made to order; the exact rank-sum test
/// checked against SciPy.
@Suite(.tier(.unit)) struct CheckTests {
    static let key = GroupKey(flow: "cx", suite: "x25519", provider: "swift-crypto", transport: "in-process")

    /// `rounds` rounds whose `sign` median is about `sign` ns and `encrypt` about 10 µs, each
    /// with a calibration unit near 100 µs scaled by a per-round machine speed.
    static func run(
        rounds: Int,
        sign: Double,
        encrypt: Double = 10_000,
        seed: UInt64,
        build: String = "debug",
        machineSpeeds: [Double]? = nil
    ) -> RunResult {
        var random = ComparisonTests.Generator(state: seed)
        func jitter() -> Double { 1 + Double.random(in: -0.02...0.02, using: &random) }
        var result = RunResult(
            metadata: RunMetadata(
                scenario: "check",
                startedAt: Date(timeIntervalSince1970: 0),
                build: build,
                machine: MachineInfo(hostname: "h", cpu: "c", cores: 2, memoryBytes: 1, os: "o", kernel: "k"),
                providers: [],
                transport: "in-process",
                clients: 1,
                load: "closed",
                command: ""
            ),
            scenarioText: "",
            groups: [],
            measuredNanoseconds: 1,
            totalNanoseconds: 1,
            plannedIterations: 1,
            completedIterations: 1,
            warmupIterations: 0,
            stoppedByDeadline: false
        )
        result.rounds = (0..<rounds).map { round in
            // A slower machine in some rounds slows the calibration and the steps alike.
            let speed = machineSpeeds?[round % machineSpeeds!.count] ?? 1
            let calibration = CalibrationSample(
                rsaSign: UInt64(1_000_000 * speed * jitter()),
                rsaVerify: UInt64(30_000 * speed),
                aesCBC16K: UInt64(10_000 * speed * jitter())
            )
            return RoundResult(
                calibration: calibration,
                groups: [
                    RoundResult.Group(
                        key: Self.key,
                        steps: [
                            .init(step: "encrypt", count: 40, p50: UInt64(encrypt * speed * jitter())),
                            .init(step: "sign", count: 40, p50: UInt64(sign * speed * jitter())),
                        ]
                    )
                ]
            )
        }
        return result
    }

    static func verdicts(_ check: RegressionCheck) -> [String: RegressionCheck.Verdict] {
        Dictionary(uniqueKeysWithValues: check.rows.map { ($0.step, $0.verdict) })
    }

    @Test("A 15% slower step is a regression; 2% noise is not; a slow machine cancels out through the calibration")
    func verdicts() throws {
        let baseline = Self.run(rounds: 10, sign: 50_000, seed: 1)
        let same = try RegressionCheck(
            run: Self.run(rounds: 10, sign: 50_000, seed: 2),
            baseline: baseline,
            threshold: 0.08,
            alpha: 0.01
        )
        #expect(Self.verdicts(same) == ["encrypt": .unchanged, "sign": .unchanged])
        #expect(same.regressions.isEmpty)

        let slowed = try RegressionCheck(
            run: Self.run(rounds: 10, sign: 57_500, seed: 3),
            baseline: baseline,
            threshold: 0.08,
            alpha: 0.01
        )
        #expect(Self.verdicts(slowed) == ["encrypt": .unchanged, "sign": .slower])
        let sign = try #require(slowed.rows.first { $0.step == "sign" })
        #expect(abs(sign.ratio - 1.15) < 0.03, "ratio \(sign.ratio)")
        #expect(sign.pValue < 1e-4)

        // The whole machine 30% slower in every round of the run: no step regressed.
        let busy = try RegressionCheck(
            run: Self.run(rounds: 10, sign: 50_000, seed: 4, machineSpeeds: [1.3, 1.25, 1.35]),
            baseline: baseline,
            threshold: 0.08,
            alpha: 0.01
        )
        #expect(busy.regressions.isEmpty, "\(busy.rows.map { ($0.step, $0.ratio) })")

        let faster = try RegressionCheck(
            run: Self.run(rounds: 10, sign: 40_000, seed: 5),
            baseline: baseline,
            threshold: 0.08,
            alpha: 0.01
        )
        #expect(Self.verdicts(faster)["sign"] == .faster)
        #expect(faster.regressions.isEmpty)
    }

    @Test("A short step (under 0.5 cu) needs the wider threshold: 15% slower is not a regression, 40% is")
    func shortSteps() throws {
        // encrypt: 10 µs against a unit of 100 µs, 0.1 cu.
        let baseline = Self.run(rounds: 10, sign: 50_000, seed: 1)
        let fifteen = try RegressionCheck(
            run: Self.run(rounds: 10, sign: 50_000, encrypt: 11_500, seed: 6),
            baseline: baseline,
            threshold: 0.08,
            alpha: 0.01
        )
        // Found (the rounds differ significantly), and said so, but inside the allowance.
        #expect(Self.verdicts(fifteen)["encrypt"] == .withinAllowance)
        #expect(
            CheckReport(fifteen, baseline: "b", run: "r").terminal()
                .contains("significant, within the noise allowance of ±25%")
        )
        #expect(fifteen.threshold(forBaseline: 0.1) == 0.25 && fifteen.threshold(forBaseline: 0.6) == 0.08)
        let forty = try RegressionCheck(
            run: Self.run(rounds: 10, sign: 50_000, encrypt: 14_000, seed: 7),
            baseline: baseline,
            threshold: 0.08,
            alpha: 0.01
        )
        #expect(Self.verdicts(forty)["encrypt"] == .slower)
        // With the floor at 0, the 15% is a regression after all.
        let strict = try RegressionCheck(
            run: Self.run(rounds: 10, sign: 50_000, encrypt: 11_500, seed: 6),
            baseline: baseline,
            threshold: 0.08,
            alpha: 0.01,
            shortStep: 0
        )
        #expect(Self.verdicts(strict)["encrypt"] == .slower)
    }

    @Test("Too few rounds get no verdict; no rounds or another build configuration is refused")
    func refusals() throws {
        let baseline = Self.run(rounds: 10, sign: 50_000, seed: 1)
        let few = try RegressionCheck(
            run: Self.run(rounds: 3, sign: 90_000, seed: 2),
            baseline: baseline,
            threshold: 0.08,
            alpha: 0.01
        )
        #expect(few.rows.allSatisfy { $0.verdict == .tooFewRounds })
        #expect(few.regressions.isEmpty)
        #expect(throws: LabError.self) {
            try RegressionCheck(
                run: Self.run(rounds: 0, sign: 1, seed: 1),
                baseline: baseline,
                threshold: 0.08,
                alpha: 0.01
            )
        }
        do {
            _ = try RegressionCheck(
                run: Self.run(rounds: 10, sign: 50_000, seed: 2, build: "release"),
                baseline: baseline,
                threshold: 0.08,
                alpha: 0.01
            )
            Issue.record("a release run was checked against a debug baseline")
        } catch let error as LabError {
            #expect(error.message.contains("debug build and the run by a release build"))
        }
    }

    @Test("The exact rank-sum p-values agree with SciPy's mannwhitneyu (exact, one-sided)")
    func rankSumMatchesSciPy() async throws {
        var random = ComparisonTests.Generator(state: 42)
        var pairs: [([Double], [Double])] = []
        for (n, m, shift) in [(10, 10, 1.0), (10, 10, 1.05), (8, 12, 1.6), (5, 5, 1.3), (20, 15, 0.97), (30, 30, 1.02)]
        {
            let a = (0..<n).map { _ in Double.random(in: 1...2, using: &random) }
            let b = (0..<m).map { _ in Double.random(in: 1...2, using: &random) * shift }
            pairs.append((a, b))
        }
        let folder = try CLITestsFolder.make()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = folder.appendingPathComponent("pairs.json")
        try JSONSerialization.data(withJSONObject: pairs.map { [$0.0, $0.1] }).write(to: input)
        let script = """
            import json, sys
            from scipy.stats import mannwhitneyu
            for a, b in json.load(open(sys.argv[1])):
                g = mannwhitneyu(b, a, alternative="greater", method="exact").pvalue
                l = mannwhitneyu(b, a, alternative="less", method="exact").pvalue
                print(json.dumps([float(g), float(l)]))
            """
        let outcome = try await ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["python3", "-c", script, input.path]
        )
        #expect(outcome.status == 0, "\(outcome.errors)")
        let answers = outcome.output.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [Double]
        }
        try #require(answers.count == pairs.count)
        for ((a, b), answer) in zip(pairs, answers) {
            let greater = RankSumTest(a, b).oneSidedPValue(greater: true)
            let less = RankSumTest(a, b).oneSidedPValue(greater: false)
            #expect(abs(greater - answer[0]) <= 1e-12 + 1e-9 * answer[0], "greater: \(greater) vs SciPy \(answer[0])")
            #expect(abs(less - answer[1]) <= 1e-12 + 1e-9 * answer[1], "less: \(less) vs SciPy \(answer[1])")
        }
        // The cases span the range: no shift, a clear one.
        #expect(answers.contains { $0[0] > 0.1 } && answers.contains { $0[0] < 1e-3 })
    }
}

/// A fresh temporary folder.
enum CLITestsFolder {
    static func make() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("check-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }
}

extension CheckTests {
    @Test("Several baselines: their spread between processes widens a step's threshold")
    func processSpread() throws {
        // Three baseline processes whose sign sits 6% apart: a run 9% slower than the middle
        // one is within twice that spread; against the middle one alone it is a regression.
        let baselines = [
            Self.run(rounds: 10, sign: 47_000, seed: 11), Self.run(rounds: 10, sign: 50_000, seed: 12),
            Self.run(rounds: 10, sign: 53_000, seed: 13),
        ]
        let run = Self.run(rounds: 10, sign: 54_500, seed: 14)
        let pooled = try RegressionCheck(run: run, baselines: baselines, threshold: 0.08, alpha: 0.01)
        let sign = try #require(pooled.rows.first { $0.step == "sign" })
        #expect(sign.threshold > 0.10, "threshold \(sign.threshold)")
        #expect(sign.verdict != .slower)
        let single = try RegressionCheck(run: run, baseline: baselines[1], threshold: 0.08, alpha: 0.01)
        #expect(Self.verdicts(single)["sign"] == .slower)
        // A real slowdown beyond the spread is still found.
        let slow = try RegressionCheck(
            run: Self.run(rounds: 10, sign: 62_000, seed: 15),
            baselines: baselines,
            threshold: 0.08,
            alpha: 0.01
        )
        #expect(Self.verdicts(slow)["sign"] == .slower)
    }
}
