import Foundation
import Histogram
import LabCore
import LabResults

/// A fixed, fully deterministic run to report on: three groups over two flows, one insecure, errors in one,
/// two thresholds of which one is missed.
enum Fixture {
    /// 2026-01-01 00:00:00 UTC.
    static let startedAt = Date(timeIntervalSince1970: 1_767_225_600)

    /// The fixture's measured window: 2 s.
    static let measuredNanoseconds: UInt64 = 2_000_000_000

    /// The run; `seed` changes every sample, `stoppedByDeadline` the run's ending.
    static func result(seed: UInt64 = 1, stoppedByDeadline: Bool = false, thresholds: Bool = true) -> RunResult {
        var random = LCG(seed: seed)
        let x25519 = GroupResult(
            key: GroupKey(flow: "cx", suite: "x25519", provider: "swift-crypto", transport: "in-process"),
            flowKind: "cx",
            insecure: false,
            steps: [
                .keygenClient: random.histogram(count: 400, around: 21_000),
                .wrap: random.histogram(count: 400, around: 48_000),
                .unwrap: random.histogram(count: 400, around: 43_000),
                .encrypt: random.histogram(count: 400, around: 3_100),
                .decrypt: random.histogram(count: 400, around: 2_900),
                .verify: random.histogram(count: 400, around: 71_000),
                .exchange: random.histogram(count: 400, around: 260_000),
            ],
            iterations: 400
        )
        let classic = GroupResult(
            key: GroupKey(flow: "cx", suite: "classic", provider: "openssl", transport: "in-process"),
            flowKind: "cx",
            insecure: true,
            steps: [
                .keygenClient: random.histogram(count: 397, around: 15_000_000),
                .wrap: random.histogram(count: 397, around: 31_000),
                .unwrap: random.histogram(count: 397, around: 610_000),
                .exchange: random.histogram(count: 397, around: 2_100_000),
            ],
            errors: ["signatureInvalid": 2, "decryptFailed": 1],
            iterations: 400
        )
        let lockout = GroupResult(
            key: GroupKey(flow: "lockout", suite: "-", provider: "swift-crypto", transport: "in-process"),
            flowKind: "lockout",
            insecure: false,
            steps: [
                Step("kdf"): random.histogram(count: 120, around: 9_500_000),
                Step("login"): random.histogram(count: 120, around: 9_800_000),
            ],
            iterations: 120
        )
        let outcomes =
            thresholds
            ? [
                ThresholdOutcome(metric: "cx.exchange.p99", condition: "< 50 ms", observed: "2.9 ms", passed: true),
                ThresholdOutcome(metric: "errors", condition: "== 0", observed: "3", passed: false),
            ] : []
        return RunResult(
            metadata: RunMetadata(
                scenario: "report-fixture",
                description: "Two cx suites side by side, and a lockout policy.",
                scenarioFile: "Scenarios/report-fixture.json",
                startedAt: Self.startedAt,
                build: "release",
                machine: MachineInfo(
                    hostname: "lab-host",
                    cpu: "Example CPU @ 3.00GHz",
                    cores: 2,
                    memoryBytes: 8 << 30,
                    os: "Ubuntu 24.04.3 LTS",
                    kernel: "6.8.0-test"
                ),
                providers: [
                    ProviderInfo(name: "swift-crypto", version: "swift-crypto 4.5.2"),
                    ProviderInfo(name: "openssl", version: "OpenSSL 3.0.17"),
                ],
                transport: "in-process",
                clients: 4,
                load: "closed, 100 iterations per client (10 warm-up)",
                command: "lab run Scenarios/report-fixture.json"
            ),
            scenarioText: """
                {
                  "name": "report-fixture",
                  "flows": [{ "flow": "cx", "suite": "x25519" }, { "flow": "cx", "suite": "classic" }]
                }
                """,
            groups: [x25519, classic, lockout],
            measuredNanoseconds: Self.measuredNanoseconds,
            totalNanoseconds: 2_500_000_000,
            plannedIterations: 800,
            completedIterations: stoppedByDeadline ? 517 : 800,
            warmupIterations: 80,
            stoppedByDeadline: stoppedByDeadline,
            thresholds: outcomes
        )
    }

    /// A histogram as the runner makes them, holding exactly `values`.
    static func histogram(_ values: [UInt64]) -> Histogram<UInt64> {
        var histogram = Histogram<UInt64>(numberOfSignificantValueDigits: .three)
        for value in values { histogram.record(value) }
        return histogram
    }
}

/// A 64-bit linear congruential generator (Knuth's MMIX constants): the same numbers on every machine.
struct LCG {
    /// The state.
    var state: UInt64

    /// A generator started at `seed`.
    init(seed: UInt64) {
        self.state = seed
    }

    /// The next 32 random bits.
    mutating func next() -> UInt64 {
        self.state = self.state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return self.state >> 32
    }

    /// `count` latencies near `median` nanoseconds: ±25 % spread, one in fifty ten times slower.
    mutating func histogram(count: Int, around median: UInt64) -> Histogram<UInt64> {
        var histogram = Histogram<UInt64>(numberOfSignificantValueDigits: .three)
        for _ in 0..<count {
            let spread = median / 2
            var value = median - median / 4 + self.next() % (spread + 1)
            if self.next() % 50 == 0 { value *= 10 }
            histogram.record(value)
        }
        return histogram
    }
}
