import Foundation
import LabCore
public import LabResults

/// `lab check` on counted runs (`lab run --counted`): per step, the median instruction count
/// over the run's samples against the baselines'.
///
/// Counts do not move with the machine's load, so the gate can be tight: a step is flagged
/// when its median moved by more than its allowance, `floor` plus `spreadFactor` times the
/// largest distance of one baseline process's median from the pooled median (the baselines
/// are runs of one build in separate processes), and never less than `minimumChange`
/// instructions. In the release build the gate counts, every step of the gate's scenario
/// repeats to the instruction or within 15 (an exchange, of millions), so their allowance is
/// the floor: 0.25%, or 150 instructions for a step under 60,000, and a 1% change of any
/// step of 15,000 instructions or more is flagged. Not less than 150: where a step's buffers
/// fall moves x25519 `encrypt` by 107 instructions (20,504 against 20,611, one build, a
/// process that slowed `decode` against one that did not, 2026-11-27). Where buffers fall
/// moves some steps by more (x25519 `decrypt` by 1.1% between processes of one binary): the
/// baseline is recorded at several heap layouts (`lab run --counted --layout N`, as
/// `scripts/gate.sh record` does), so their spread widens their allowance, and the check
/// notes baselines all counted at one layout. A step whose work depends on each run's random keys (Ed25519
/// verification is variable-time; RSA key generation searches for primes) shows that in its
/// spread, and gets a wider allowance, unless the scenario fixes its keys (`"keys": "fixed"`,
/// as the CI gate's does). Steps with fewer than `minimumSamples` samples on either side (a
/// per-run key generation: one sample, its first call's one-time work included) are
/// reported and not judged.
public struct CountedCheck: RegressionGate {
    /// What the check decided about one step.
    public enum Verdict: String, GateVerdict {
        /// More instructions than the allowance lets through: a regression.
        case more = "more work"
        /// Fewer, beyond the allowance.
        case less = "less work"
        /// Within the allowance.
        case unchanged = "within the allowance"
        /// Fewer than `minimumSamples` samples on either side.
        case tooFewSamples = "too few samples"

        /// Whether the step regressed: `more` work.
        public var isRegression: Bool { self == .more }
        /// Whether the step did less work beyond its allowance.
        public var isImprovement: Bool { self == .less }
        /// Whether both sides had enough samples.
        public var isJudged: Bool { self != .tooFewSamples }
    }

    /// What the check measures of a step besides its two medians and their ratio.
    public struct Figures: Sendable {
        /// The largest relative distance of one baseline process's median from the baseline's.
        public var spread: Double
        /// The change allowed, relative: `floor + spreadFactor × spread`, or `minimumChange`
        /// instructions if that is more.
        public var allowance: Double
        /// Samples on each side (the baselines' summed).
        public var samples: (baseline: Int, run: Int)
        /// Median allocator calls on each side (the baselines': of the pooled samples).
        public var allocations: (baseline: UInt64, run: UInt64)
    }

    /// One step of one group: the median of the baseline processes' medians and the run's
    /// median, in instructions, and run ÷ baseline.
    public typealias Row = GateRow<Verdict, Figures>

    /// Samples each side needs before a step gets a verdict.
    public static let minimumSamples = 5

    /// Every step both sides counted, in group then report order.
    public var rows: [Row]
    /// Facts a reader should know: differences in build, counter, providers; steps one side lacks.
    public var notes: [String]
    /// The smallest relative change flagged in a step that repeats exactly: 0.25% unless told.
    /// Release builds repeat every step of the gate's scenario to the instruction but the
    /// exchanges (within 15 instructions of millions; docs/performance.md, 2026-11-26); the
    /// debug build the gate once counted moved by up to 0.8% with the runtime's caches, and
    /// needed 1.5%.
    public var floor: Double
    /// How many times the baselines' spread a step may move beyond the floor.
    public var spreadFactor: Double
    /// The smallest change, in instructions, ever flagged: 100 unless told. Work beside a
    /// step can move it by a few dozen instructions without touching its code (where its
    /// buffers fall: x25519 `encrypt` +54 with `decode` slowed, 2026-11-26), and a step of a
    /// thousand instructions must not fail on that.
    public var minimumChange: Double

    /// Whether `result` is a counted run.
    public static func isCounted(_ result: RunResult) -> Bool {
        result.metadata.counter != nil
    }

    /// Checks `run` against `baselines`. Throws `.invalidScenario` (exit 1) when they cannot
    /// be compared: a side that was not counted, or builds of different configurations.
    public init(
        run: RunResult,
        baselines: [RunResult],
        floor: Double = 0.0025,
        spreadFactor: Double = 2,
        minimumChange: Double = 150
    ) throws {
        guard let first = baselines.first else { throw LabError(.invalidScenario, "`lab check` needs a baseline") }
        for (name, result) in [("The run", run)] + baselines.map({ ("A baseline", $0) })
        where !Self.isCounted(result) {
            throw LabError(
                .invalidScenario,
                "\(name) (\(result.metadata.scenario), \(result.metadata.command)) was timed, not counted; a counted check compares runs of `lab run --counted` only"
            )
        }
        for result in [run] + baselines where result.metadata.build != first.metadata.build {
            throw LabError(
                .invalidScenario,
                "The runs were counted in different build configurations (\(first.metadata.build), \(result.metadata.build)); their counts do not compare. Record the baseline with the build the check runs"
            )
        }
        self.floor = floor
        self.spreadFactor = spreadFactor
        self.minimumChange = minimumChange
        self.rows = []
        self.notes = Self.differences(run: run, baselines: baselines)
        self.compare(run: run, baselines: baselines)
    }

    /// Notes on what differs between the run and the baselines beyond their counts: the
    /// counter, the heap layouts, the providers, the CPU.
    static func differences(run: RunResult, baselines: [RunResult]) -> [String] {
        guard let first = baselines.first else { return [] }
        var notes: [String] = []
        if run.metadata.counter != first.metadata.counter {
            notes.append(
                "The baseline was counted with \(first.metadata.counter ?? "?"), the run with \(run.metadata.counter ?? "?")."
            )
        }
        if baselines.count > 1, Set(baselines.map { $0.metadata.heapLayout ?? 0 }).count == 1 {
            notes.append(
                "The baselines were all counted at one heap layout: their spread does not show how far where a step's buffers fall moves it, and another build may move such a step beyond its allowance. Record them with `bash scripts/gate.sh record`, which counts each run at a layout of its own (`lab run --counted --layout N`)."
            )
        }
        let runProviders = run.metadata.providers.map { "\($0.name) \($0.version)" }.sorted()
        let baseProviders = first.metadata.providers.map { "\($0.name) \($0.version)" }.sorted()
        if runProviders != baseProviders {
            notes.append(
                "Providers differ: baseline \(baseProviders.joined(separator: ", ")); run \(runProviders.joined(separator: ", "))."
            )
        }
        if run.metadata.machine.cpu != first.metadata.machine.cpu {
            notes.append(
                "The baseline was counted on \(first.metadata.machine.cpu), the run on \(run.metadata.machine.cpu): libraries that pick code by CPU features (BoringSSL, OpenSSL) may run other code."
            )
        }
        return notes
    }

    /// A row per step both sides counted; a note for each group only one side has.
    private mutating func compare(run: RunResult, baselines: [RunResult]) {
        var rows: [Row] = []
        let keys = Set(baselines.flatMap { $0.groups.map(\.key) })
        for key in keys.sorted() {
            guard let group = run.groups.first(where: { $0.key == key }) else {
                self.notes.append("The run has no group '\(key)'.")
                continue
            }
            let baseGroups = baselines.compactMap { $0.groups.first { $0.key == key } }
            var steps = Set(baseGroups.flatMap { $0.details.compactMap { $0.value.counts == nil ? nil : $0.key } })
            steps.formIntersection(group.details.compactMap { $0.value.counts == nil ? nil : $0.key })
            for step in steps.sorted(by: Step.reportOrdering) {
                guard let counts = group.details[step]?.counts else { continue }
                rows.append(
                    self.row(key, step, run: counts, baselines: baseGroups.compactMap { $0.details[step]?.counts })
                )
            }
        }
        for group in run.groups where !keys.contains(group.key) {
            self.notes.append("Only the run has the group '\(group.key)'.")
        }
        self.rows = rows
    }

    private func row(_ key: GroupKey, _ step: Step, run: WorkCounts, baselines: [WorkCounts]) -> Row {
        let judged = baselines.filter { $0.instructions.count >= Self.minimumSamples }
        let medians = (judged.isEmpty ? baselines : judged).compactMap(\.medianInstructions).map { Double($0) }
        let baseline = RegressionCheck.median(medians)
        let spread = baseline > 0 ? medians.map { abs($0 / baseline - 1) }.max() ?? 0 : 0
        let median = Double(run.medianInstructions ?? 0)
        let ratio = baseline > 0 ? median / baseline : 1
        let allowance = max(
            self.floor + self.spreadFactor * spread,
            baseline > 0 ? self.minimumChange / baseline : 0
        )
        let pooled = WorkCounts(allocations: baselines.flatMap(\.allocations))
        let verdict: Verdict =
            judged.isEmpty || run.instructions.count < Self.minimumSamples
            ? .tooFewSamples
            : ratio > 1 + allowance ? .more : ratio < 1 / (1 + allowance) ? .less : .unchanged
        return Row(
            key: key,
            step: step.name,
            baseline: baseline,
            run: median,
            ratio: ratio,
            figures: Figures(
                spread: spread,
                allowance: allowance,
                samples: (baselines.reduce(0) { $0 + $1.instructions.count }, run.instructions.count),
                allocations: (pooled.medianAllocations ?? 0, run.medianAllocations ?? 0)
            ),
            verdict: verdict
        )
    }
}
