import Foundation
import Histogram
import LabCore
import LabResults
import Synchronization

/// The run's step histograms, one set per group, kept in a few stripes that clients share
/// (client i writes to stripe i mod stripes) and merged exactly at the end.
///
/// One histogram per client and step would need no lock, but an HDR histogram of three
/// significant digits grows to about 100 KiB to hold millisecond samples: a thousand
/// clients made gigabytes, and their growth (an unspecialised append in the histogram
/// package) took most of the CPU. With stripes, a client takes one uncontended lock per
/// iteration (twice as many stripes as cores, each held for a dozen records).
final class StepHistograms: Sendable {
    /// One group's steps in one stripe: the time histograms, and what the samples show
    /// beside their times.
    struct Steps: Sendable {
        var times: [Step: Histogram<UInt64>] = [:]
        var details: [Step: StepDetail] = [:]

        mutating func record(_ step: Step, _ sample: StepSample) {
            self.times[step, default: StepHistograms.histogram()].record(sample.nanoseconds)
            self.details[step, default: StepDetail()].record(sample)
        }
    }

    private final class Stripe: Sendable {
        let groups: Mutex<[Steps]>
        init(groups: Int) { self.groups = Mutex(Array(repeating: Steps(), count: groups)) }
    }

    private let stripes: [Stripe]

    /// Histograms for `groups` groups in enough stripes for this machine.
    init(groups: Int, stripes: Int = 2 * max(1, ProcessInfo.processInfo.activeProcessorCount)) {
        self.stripes = (0..<max(1, stripes)).map { _ in Stripe(groups: groups) }
    }

    /// The stripe client `index` writes to.
    func stripe(for index: Int) -> Int { index % self.stripes.count }

    /// Records `entries` (and `extra`, if any) into `group`'s histograms in `stripe`.
    func record(
        stripe: Int,
        group: Int,
        _ entries: [(step: Step, sample: StepSample)],
        _ extra: [(step: Step, sample: StepSample)] = []
    ) {
        guard !entries.isEmpty || !extra.isEmpty else { return }
        self.stripes[stripe].groups.withLock { groups in
            for (step, sample) in entries { groups[group].record(step, sample) }
            for (step, sample) in extra { groups[group].record(step, sample) }
        }
    }

    /// Every stripe added together, per group.
    func merged() -> [Steps] {
        var merged: [Steps] = []
        for stripe in self.stripes {
            let groups = stripe.groups.withLock { $0 }
            if merged.isEmpty { merged = Array(repeating: Steps(), count: groups.count) }
            for (index, steps) in groups.enumerated() {
                for (step, histogram) in steps.times {
                    if merged[index].times[step] == nil {
                        merged[index].times[step] = histogram
                    } else {
                        merged[index].times[step]!.add(histogram)
                    }
                }
                for (step, detail) in steps.details {
                    if merged[index].details[step] == nil {
                        merged[index].details[step] = detail
                    } else {
                        merged[index].details[step]!.merge(detail)
                    }
                }
            }
        }
        return merged
    }

    /// An empty histogram that already spans 1 ns to 1 ms (90 KiB) and grows past that.
    ///
    /// Grown from nothing, each histogram resized a dozen times on the way to its largest
    /// sample, and the package's resize appends zeros through unspecialised generic code:
    /// 2.6% of an in-process x25519 run's measured phase went there (perf, release).
    static func histogram() -> Histogram<UInt64> { StepDetail.histogram() }
}

/// One simulated client's measurements: counts per group, its measured window and its
/// rounds' samples, owned by the client's task; its step timings go to the run's shared
/// `StepHistograms`, in the client's stripe.
struct ClientRecorder: Sendable {
    struct Group: Sendable {
        var errors: [String: UInt64] = [:]
        var iterations: UInt64 = 0
        /// Outcome counts (`StepRecorder.count`), by name.
        var outcomes: [String: UInt64] = [:]
    }

    var groups: [Group]
    /// Where the step timings go, and this client's stripe there.
    let histograms: StepHistograms
    let stripe: Int
    /// Monotonic start of this client's first measured iteration, and end of its last.
    var firstStart: UInt64 = .max
    var lastEnd: UInt64 = 0
    var measured = 0
    var warmup = 0
    var stoppedByDeadline = false
    /// With `rounds` > 1: every successful measured sample, by round, group and step
    /// (`RoundResult` takes exact medians of them). Empty otherwise.
    var roundSamples: [[[Step: [UInt64]]]] = []

    init(groups: Int, histograms: StepHistograms, client index: Int) {
        self.groups = Array(repeating: Group(), count: groups)
        self.histograms = histograms
        self.stripe = histograms.stripe(for: index)
    }

    /// Records `steps`' timings (and `extra` ones: the exchange) and adds their outcome counts.
    mutating func record(_ group: Int, _ steps: IterationSteps, extra: [(step: Step, sample: StepSample)] = []) {
        self.histograms.record(stripe: self.stripe, group: group, steps.entries, extra)
        self.count(group, steps)
    }

    /// Keeps an iteration's samples for the current round's medians.
    mutating func keepForRound(_ group: Int, _ steps: IterationSteps, exchange: UInt64) {
        guard !self.roundSamples.isEmpty else { return }
        let round = self.roundSamples.count - 1
        for (step, sample) in steps.entries {
            self.roundSamples[round][group][step, default: []].append(sample.nanoseconds)
        }
        self.roundSamples[round][group][.exchange, default: []].append(exchange)
    }

    /// Adds `steps`' outcome counts alone (a failed iteration's timings are not kept, its counts are).
    mutating func count(_ group: Int, _ steps: IterationSteps) {
        for (outcome, amount) in steps.outcomes {
            self.groups[group].outcomes[outcome, default: 0] &+= amount
        }
    }
}

/// The steps of one iteration, each summed over both sides (e.g. the client's and the
/// server's `encode`), so every step gets one sample per iteration; and its outcome counts.
struct IterationSteps: StepRecorder {
    var entries: [(step: Step, sample: StepSample)] = []
    var outcomes: [String: UInt64] = [:]
    /// Test-only: the run's slowed steps (`Plan.slowdowns`), nil in every normal run.
    let slowdown: StepSlowdown?
    /// The group the iteration runs (a slowed step is slowed by its own group's amount).
    let group: Int
    /// How many parts of each step were recorded so far in this iteration.
    private var parts: [Step: Int] = [:]

    init(slowdown: StepSlowdown? = nil, group: Int = 0) {
        self.entries.reserveCapacity(12)
        self.slowdown = slowdown
        self.group = group
    }

    var addsWork: Bool { self.slowdown != nil }

    mutating func workToAdd(to step: Step) -> Int {
        self.slowdown?.rounds(group: self.group, step, part: self.parts[step, default: 0]) ?? 0
    }

    mutating func addedWork(to step: Step, took nanoseconds: UInt64) {
        self.slowdown?.added(group: self.group, step, part: self.parts[step, default: 0], took: nanoseconds)
    }

    mutating func record(_ step: Step, nanoseconds: UInt64) {
        self.record(step, sample: StepSample(nanoseconds: nanoseconds))
    }

    mutating func record(_ step: Step, sample: StepSample) {
        if let slowdown = self.slowdown {
            slowdown.observe(group: self.group, step, part: self.parts[step, default: 0], sample)
            self.parts[step, default: 0] += 1
        }
        if let index = self.entries.firstIndex(where: { $0.step == step }) {
            self.entries[index].sample.add(sample)
        } else {
            self.entries.append((step, sample))
        }
    }

    mutating func count(_ outcome: String, by amount: UInt64) {
        self.outcomes[outcome, default: 0] &+= amount
    }
}

/// Test-only (`lab run --test-slowdown STEP=P%`): makes a step P% slower with real work done
/// inside its timed region, so that `lab compare` and `lab check` are shown to find a
/// slowdown that meets the machine's noise like the step itself does (a sample multiplied
/// after the fact would be a noise-free shift).
///
/// The work is rounds of integer arithmetic: P% of the step's median time so far, and from
/// the step's `calibrationSamples`-th measurement on a fixed number of rounds, the same in
/// every measurement. A round's cost is what the rounds added so far took, as `measure`
/// timed them inside the step (the median per round). Sized by one timing at start, a
/// round dearer than timed made a 1,900% slowdown read ×88 (the step's own time is what is
/// left when the added work is taken out, so an error in a round's cost feeds back into the
/// next amount), and one cheaper than timed made a 300% slowdown read ×1.8.
/// In a counted run (`lab run --counted`) the rounds are sized in instructions instead: P%
/// of the step's median count so far, at the count one round was measured to take in this
/// process, which is exact.
/// Only steps timed with `StepRecorder.measure` can be slowed (cx/1's crypto and coding
/// steps, msg/1's client-side crypto); `unslowed` names the others, and the run fails
/// naming them.
final class StepSlowdown: Sendable {
    /// Measurements of a step that fix its amount of added work.
    /// (8 in a counted run, where every measurement of a step counts alike.)
    static var calibrationSamples: Int { WorkCounter.isActive ? 8 : 64 }

    /// A slowed step of one group, and which part of it (the client's or the server's
    /// `decode`, in the order they ran): each is slowed by its own amount, so that the
    /// iteration's summed step is slowed by the fraction whatever its parts' sizes.
    private struct Key: Hashable {
        var group: Int
        var step: Step
        var part: Int
    }

    private struct Slowed {
        var samples: [UInt64] = []
        var rounds: Int? = nil
        /// The amount for the next sample until `rounds` is fixed.
        var planned = 0
        /// Whether `measure` asked for this sample's amount: a sample recorded without asking
        /// (a step not timed by `measure` here) neither counts nor fixes anything.
        var asked = false
        /// What the last `rounds(group:_:part:)` added (nanoseconds, or instructions when
        /// counted), which the sample `observe` then sees includes.
        var added: Double = 0
        /// How many rounds the last `rounds(group:_:part:)` asked for.
        var addedRounds = 0
        /// What one round took, each time added work was timed (nanoseconds).
        var roundCosts: [Double] = []
    }

    private let fractions: [Step: Double]
    private let slowed = Mutex<[Key: Slowed]>([:])
    /// What one round of `spin` cost at start, in nanoseconds: the cost until rounds added to
    /// the step were timed.
    private let roundNanoseconds: Double
    /// In a counted run: the instructions one round of `spin` takes (`prepareCounting`).
    private let roundInstructions = Mutex<Double>(1)

    /// Nil when nothing is slowed.
    init?(_ fractions: [Step: Double]) {
        guard !fractions.isEmpty else { return nil }
        self.fractions = fractions
        // The cheapest of five timings of 100,000 rounds: the cost with the least noise in it.
        let rounds = 100_000
        var best = UInt64.max
        for _ in 0..<5 {
            let start = Stopwatch.now()
            AddedWork.spin(rounds)
            best = min(best, Stopwatch.now() &- start)
        }
        self.roundNanoseconds = max(Double(best) / Double(rounds), 0.01)
    }

    /// In a counted run, once counting has started and before any step runs: counts what one
    /// round of `spin` takes, over 100,000 rounds.
    func prepareCounting() {
        guard let before = WorkCounter.read() else { return }
        let rounds = 100_000
        AddedWork.spin(rounds)
        guard let after = WorkCounter.read() else { return }
        self.roundInstructions.withLock { $0 = max(Double(after.instructions &- before.instructions) / Double(rounds), 0.01) }
    }

    /// The rounds to add to `part` of `step` in `group`: the fraction of the median of the
    /// samples `observe` saw so far (none before the first), fixed from the
    /// `calibrationSamples`-th on. Called before the step runs, outside what it measures.
    func rounds(group: Int, _ step: Step, part: Int) -> Int {
        guard self.fractions[step] != nil else { return 0 }
        let perRound = WorkCounter.isActive ? self.roundInstructions.withLock { $0 } : self.roundNanoseconds
        return self.slowed.withLock { all in
            let key = Key(group: group, step: step, part: part)
            var slowed = all[key] ?? Slowed()
            defer { all[key] = slowed }
            let rounds = slowed.rounds ?? slowed.planned
            slowed.added = Double(rounds) * perRound
            slowed.addedRounds = rounds
            slowed.asked = true
            return rounds
        }
    }

    /// What the rounds just added to `part` of `step` in `group` took, timed inside the step:
    /// taken out of the sample `observe` sees next, and the cost of a round from now on.
    /// (In a counted run the count of a round is exact, and the time is not what is sized.)
    func added(group: Int, _ step: Step, part: Int, took nanoseconds: UInt64) {
        guard self.fractions[step] != nil, !WorkCounter.isActive else { return }
        self.slowed.withLock { all in
            let key = Key(group: group, step: step, part: part)
            guard var slowed = all[key], slowed.asked, slowed.addedRounds > 0 else { return }
            slowed.added = Double(nanoseconds)
            if slowed.rounds == nil { slowed.roundCosts.append(Double(nanoseconds) / Double(slowed.addedRounds)) }
            all[key] = slowed
        }
    }

    /// Sees `part` of `step` in `group` as recorded (its time, or in a counted run its
    /// instructions), takes out what was added to it, and plans the next sample's amount.
    func observe(group: Int, _ step: Step, part: Int, _ sample: StepSample) {
        guard let fraction = self.fractions[step] else { return }
        let counted = WorkCounter.isActive
        guard let measure = counted ? sample.instructions : sample.nanoseconds else { return }
        let startCost = counted ? self.roundInstructions.withLock { $0 } : self.roundNanoseconds
        self.slowed.withLock { all in
            let key = Key(group: group, step: step, part: part)
            var slowed = all[key] ?? Slowed()
            defer { all[key] = slowed }
            guard slowed.asked else { return }
            let perRound = slowed.roundCosts.isEmpty ? startCost : max(Self.median(slowed.roundCosts), 0.01)
            let own = max(0, Double(measure) - slowed.added)
            slowed.added = 0
            slowed.asked = false
            guard slowed.rounds == nil else { return }
            slowed.samples.append(UInt64(own))
            slowed.planned = max(1, Int((Self.median(slowed.samples) * fraction / perRound).rounded()))
            if slowed.samples.count == Self.calibrationSamples { slowed.rounds = slowed.planned }
        }
    }

    /// The slowed steps whose added work was never fixed in any group: not timed with
    /// `measure`, or measured fewer than `calibrationSamples` times.
    var unslowed: [Step] {
        let fixed = self.slowed.withLock { all in Set(all.filter { $0.value.rounds != nil }.map(\.key.step)) }
        return self.fractions.keys.filter { !fixed.contains($0) }.sorted()
    }

    private static func median(_ values: [UInt64]) -> Double {
        Self.median(values.map { Double($0) })
    }

    private static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted[sorted.count / 2]
    }
}

/// A small, fast, seedable generator (SplitMix64) for each client's choice of flow.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) {
        self.state = seed
    }

    mutating func next() -> UInt64 {
        self.state &+= 0x9E37_79B9_7F4A_7C15
        var z = self.state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
