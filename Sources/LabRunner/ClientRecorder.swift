import Foundation
import Histogram
package import LabCore
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
            self.times[step, default: StepHistograms.histogram()].recordWidening(sample.nanoseconds)
            self.details[step, default: StepDetail()].record(sample)
        }

        /// Empty histograms for `steps`, with CPU-time ones for those in `cpu` too.
        static func made(_ steps: [Step], cpu: Set<Step>) -> Steps {
            var made = Steps()
            for step in steps where made.times[step] == nil {
                made.times[step] = StepHistograms.histogram()
                var detail = StepDetail()
                if cpu.contains(step) { detail.cpu = StepHistograms.histogram() }
                made.details[step] = detail
            }
            return made
        }

        /// Without the steps that had no sample, and without CPU times where none was read:
        /// what recording the samples alone into empty histograms would have made.
        func withoutEmpty() -> Steps {
            var kept = Steps()
            for (step, histogram) in self.times where histogram.totalCount > 0 {
                kept.times[step] = histogram
                var detail = self.details[step] ?? StepDetail()
                if detail.cpu?.totalCount == 0 { detail.cpu = nil }
                kept.details[step] = detail
            }
            return kept
        }
    }

    /// One group's samples in one interval (`RunIntervals`), in one stripe: a histogram per
    /// step and the failed iterations.
    struct IntervalSlot: Sendable {
        var times: [Step: Histogram<UInt64>] = [:]
        var errors: UInt64 = 0
        /// Iterations that ended, successfully, in this interval.
        var completed: UInt64 = 0

        mutating func record(
            _ entries: [(step: Step, sample: StepSample)],
            _ extra: [(step: Step, sample: StepSample)]
        ) {
            for (step, sample) in entries {
                self.times[step, default: StepHistograms.intervalHistogram()].recordWidening(sample.nanoseconds)
            }
            for (step, sample) in extra {
                self.times[step, default: StepHistograms.intervalHistogram()].recordWidening(sample.nanoseconds)
            }
        }

        /// Whether it holds nothing: no sample, failure or completion.
        var isEmpty: Bool { self.errors == 0 && self.completed == 0 && self.times.values.allSatisfy { $0.totalCount == 0 } }

        /// Empty histograms for `steps`.
        static func made(_ steps: [Step]) -> IntervalSlot {
            var made = IntervalSlot()
            for step in steps { made.times[step] = StepHistograms.intervalHistogram() }
            return made
        }

        /// Adds `other` (the same group and interval, from another stripe).
        mutating func add(_ other: IntervalSlot) {
            self.errors += other.errors
            self.completed += other.completed
            for (step, histogram) in other.times {
                if self.times[step] == nil { self.times[step] = histogram } else { self.times[step]!.addWidening(histogram) }
            }
        }
    }

    /// A group and an interval.
    struct IntervalKey: Hashable, Sendable {
        var group: Int
        var index: Int
    }

    /// What one stripe holds: each group's histograms for the whole run, and the intervals
    /// not yet taken by the run's `IntervalCollector`.
    private struct StripeState: Sendable {
        var groups: [Steps]
        var intervals: [IntervalKey: IntervalSlot] = [:]
    }

    private final class Stripe: Sendable {
        let state: Mutex<StripeState>
        init(groups: Int) { self.state = Mutex(StripeState(groups: Array(repeating: Steps(), count: groups))) }
    }

    private let stripes: [Stripe]
    /// The steps each group records in every measured iteration, whose histograms are made
    /// ahead of their first sample.
    private let steps: [[Step]]

    /// Histograms for `groups` groups in enough stripes for this machine, nothing made ahead.
    convenience init(groups: Int, stripes: Int = StepHistograms.defaultStripes) {
        self.init(steps: Array(repeating: [], count: groups), cpu: [], intervals: false, stripes: stripes)
    }

    /// Histograms for `steps.count` groups, each group's `steps` (with CPU-time histograms
    /// for `cpu`'s) made now in every stripe, before any client runs, and with `intervals`
    /// the first two intervals' too.
    ///
    /// Made at their first sample instead, the quickstart's 4 stripes × 6 groups × 13 steps,
    /// three 90 KiB histograms each, were 84 MB of fresh pages touched in the first measured
    /// milliseconds: every exchange due then waited 40–60 ms (p99 over 50 ms, the
    /// quickstart's threshold, in 1 of 5 clean-clone CI runs beside a busy core).
    init(steps: [[Step]], cpu: Set<Step>, intervals: Bool, stripes: Int = StepHistograms.defaultStripes) {
        self.steps = steps
        self.stripes = (0..<max(1, stripes)).map { _ in Stripe(groups: steps.count) }
        for stripe in self.stripes {
            stripe.state.withLock { state in
                for (group, steps) in steps.enumerated() where !steps.isEmpty { state.groups[group] = .made(steps, cpu: cpu) }
            }
        }
        if intervals {
            self.makeInterval(0)
            self.makeInterval(1)
        }
    }

    /// Twice as many stripes as cores.
    static var defaultStripes: Int { 2 * max(1, ProcessInfo.processInfo.activeProcessorCount) }

    /// Makes interval `index`'s histograms in every stripe ahead of its first sample (the
    /// `IntervalCollector` makes the next one's at each tick, off the clients' path).
    func makeInterval(_ index: Int) {
        guard self.steps.contains(where: { !$0.isEmpty }) else { return }
        for stripe in self.stripes {
            // Each stripe its own: a copy would share its storage until its first sample,
            // which would then copy it, on a client's path.
            let made = self.steps.map { IntervalSlot.made($0) }
            stripe.state.withLock { state in
                for (group, slot) in made.enumerated() where !self.steps[group].isEmpty {
                    let key = IntervalKey(group: group, index: index)
                    if state.intervals[key] == nil { state.intervals[key] = slot }
                }
            }
        }
    }

    /// The stripe client `index` writes to.
    func stripe(for index: Int) -> Int { index % self.stripes.count }

    /// Records `entries` (and `extra`, if any) into `group`'s histograms in `stripe`, and into
    /// its histograms of interval `interval` if given (a measured iteration's, with intervals
    /// on), counting it as completed in interval `ended`.
    func record(
        stripe: Int,
        group: Int,
        _ entries: [(step: Step, sample: StepSample)],
        _ extra: [(step: Step, sample: StepSample)] = [],
        interval: (started: Int, ended: Int)? = nil
    ) {
        guard !entries.isEmpty || !extra.isEmpty else { return }
        self.stripes[stripe].state.withLock { state in
            for (step, sample) in entries { state.groups[group].record(step, sample) }
            for (step, sample) in extra { state.groups[group].record(step, sample) }
            guard let interval else { return }
            // One lookup, the slot modified in place.
            state.intervals[IntervalKey(group: group, index: interval.started), default: IntervalSlot()].record(entries, extra)
            state.intervals[IntervalKey(group: group, index: interval.ended), default: IntervalSlot()].completed += 1
        }
    }

    /// Counts a failed iteration of `group` that started in interval `interval`.
    func failed(stripe: Int, group: Int, interval: Int) {
        self.stripes[stripe].state.withLock { state in
            state.intervals[IntervalKey(group: group, index: interval), default: IntervalSlot()].errors += 1
        }
    }

    /// Takes every stripe's intervals before `index` out of the stripes (the swap of
    /// HdrHistogram's recorder: the lock is held to move them, never to read them), added
    /// up per group and interval.
    func takeIntervals(before index: Int) -> [IntervalKey: IntervalSlot] {
        var taken: [IntervalKey: IntervalSlot] = [:]
        for stripe in self.stripes {
            let slots = stripe.state.withLock { state -> [IntervalKey: IntervalSlot] in
                guard state.intervals.keys.contains(where: { $0.index < index }) else { return [:] }
                let (old, current) = (
                    state.intervals.filter { $0.key.index < index }, state.intervals.filter { $0.key.index >= index }
                )
                state.intervals = current
                return old
            }
            for (key, made) in slots {
                // Histograms made ahead that no sample reached are not part of the run.
                var slot = made
                slot.times = made.times.filter { $0.value.totalCount > 0 }
                guard !slot.isEmpty else { continue }
                if taken[key] == nil { taken[key] = slot } else { taken[key]!.add(slot) }
            }
        }
        return taken
    }

    /// Every stripe added together, per group.
    func merged() -> [Steps] {
        var merged: [Steps] = []
        for stripe in self.stripes {
            let groups = stripe.state.withLock { $0.groups }
            if merged.isEmpty { merged = Array(repeating: Steps(), count: groups.count) }
            for (index, steps) in groups.enumerated() {
                for (step, histogram) in steps.times {
                    if merged[index].times[step] == nil {
                        merged[index].times[step] = histogram
                    } else {
                        merged[index].times[step]!.addWidening(histogram)
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
        return merged.map { $0.withoutEmpty() }
    }

    /// An empty interval histogram: `RunIntervals`' layout, spanning 1 ns to 1 ms to start
    /// with (14 KiB; made once per step, interval and stripe) and growing past that.
    static func intervalHistogram() -> Histogram<UInt64> {
        Histograms.empty(digits: RunIntervals.significantDigits, spanning: 1 << 20)
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
        /// Each error kind's first message.
        var errorMessages: [String: String] = [:]
        var iterations: UInt64 = 0
        /// Outcome counts (`StepRecorder.count`), by name.
        var outcomes: [String: UInt64] = [:]
        /// Bytes on the wire by step: measured iterations' (failed ones included), and set-up's.
        var traffic: [Step: StepTraffic] = [:]
        var setupTraffic: [Step: StepTraffic] = [:]
        /// What TCP did, by step (`report.packets`): measured iterations', and set-up's.
        var packets: [Step: StepPackets] = [:]
        var setupPackets: [Step: StepPackets] = [:]
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

    /// Records `steps`' timings (and `extra` ones: the exchange), in interval `interval` too
    /// if given, and adds their outcome counts.
    mutating func record(
        _ group: Int,
        _ steps: IterationSteps,
        extra: [(step: Step, sample: StepSample)] = [],
        interval: (started: Int, ended: Int)? = nil
    ) {
        self.histograms.record(stripe: self.stripe, group: group, steps.entries, extra, interval: interval)
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

    /// Adds `steps`' bytes on the wire to the group's: a measured iteration's, or set-up's.
    mutating func addTraffic(_ group: Int, _ steps: IterationSteps, measured: Bool) {
        for (step, packets) in steps.packets {
            if measured {
                self.groups[group].packets[step, default: StepPackets()].add(packets)
            } else {
                self.groups[group].setupPackets[step, default: StepPackets()].add(packets)
            }
        }
        guard !steps.traffic.isEmpty else { return }
        if measured {
            steps.traffic.add(into: &self.groups[group].traffic)
        } else {
            steps.traffic.add(into: &self.groups[group].setupTraffic)
        }
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
package struct IterationSteps: StepRecorder {
    var entries: [(step: Step, sample: StepSample)] = []
    var outcomes: [String: UInt64] = [:]
    /// Bytes on the wire, by the step that sent them.
    var traffic = TrafficLog()
    /// What TCP did, by step; empty unless `readsPackets`.
    var packets: [Step: StepPackets] = [:]
    /// Test-only: the run's slowed steps (`Plan.slowdowns`), nil in every normal run.
    let slowdown: StepSlowdown?
    /// The group the iteration runs (a slowed step is slowed by its own group's amount).
    let group: Int
    /// With a slowdown: how many parts of each slowed step (by `StepSlowdown.slot(of:)`) were
    /// recorded so far in this iteration. In the struct itself, so that it allocates nothing
    /// (`StepSlowdown` says why that matters).
    private var parts = PartCounts()

    /// Whether steps read their thread's usage (`report.stepUsage`).
    package let readsUsage: Bool
    /// Whether connections read TCP's counters around each round trip (`report.packets`).
    package let readsPackets: Bool

    package init(slowdown: StepSlowdown? = nil, group: Int = 0, readsUsage: Bool = false, readsPackets: Bool = false) {
        self.entries.reserveCapacity(12)
        self.readsPackets = readsPackets
        self.slowdown = slowdown
        self.group = group
        self.readsUsage = readsUsage
    }

    /// One sample of `body`, recorded under `step`; in a run with `--test-slowdown`, a slowed
    /// step also runs the rounds of added work its slowdown asks for, inside its timed (and
    /// counted) region, right after its own work, so that the added work is timed and
    /// counted, and meets the machine's noise, exactly as the step's does.
    package mutating func measure<T>(_ step: Step, _ body: () throws -> T) rethrows -> T {
        let rounds = self.slowdown == nil ? 0 : self.workToAdd(to: step)
        let (result, sample, added) = try StepSampling.sample(readsUsage: self.readsUsage, adding: rounds, body)
        if rounds > 0 { self.addedWork(to: step, took: added) }
        self.record(step, sample: sample)
        return result
    }

    /// Test-only: the rounds of `AddedWork.spin` to add to `step`'s next part; asked before
    /// its timed region opens, so that deciding costs the step nothing.
    package mutating func workToAdd(to step: Step) -> Int {
        guard let slowdown = self.slowdown, let slot = slowdown.slot(of: step) else { return 0 }
        return slowdown.rounds(group: self.group, step, part: self.parts[slot])
    }

    /// Test-only: how long the rounds `workToAdd(to:)` asked for took, inside the sample of
    /// `step` that `record` gets next; told before that `record`, so that the slowdown sizes
    /// the work by what it really costs now, not by what it cost once.
    package mutating func addedWork(to step: Step, took nanoseconds: UInt64) {
        guard let slowdown = self.slowdown, let slot = slowdown.slot(of: step) else { return }
        slowdown.added(group: self.group, step, part: self.parts[slot], took: nanoseconds)
    }

    package mutating func record(_ step: Step, nanoseconds: UInt64) {
        self.record(step, sample: StepSample(nanoseconds: nanoseconds))
    }

    package mutating func record(_ step: Step, sample: StepSample) {
        if let slowdown = self.slowdown, let slot = slowdown.slot(of: step) {
            slowdown.observe(group: self.group, step, part: self.parts[slot], sample)
            self.parts.increment(slot)
        }
        if let index = self.entries.firstIndex(where: { $0.step == step }) {
            self.entries[index].sample.add(sample)
        } else {
            self.entries.append((step, sample))
        }
    }

    package mutating func count(_ outcome: String, by amount: UInt64) {
        self.outcomes[outcome, default: 0] &+= amount
    }

    package mutating func transferred(_ step: Step, sent: Int, received: Int) {
        self.traffic.add(step, sent: sent, received: received)
    }

    package mutating func packets(_ step: Step, _ packets: StepPackets) {
        self.packets[step, default: StepPackets()].add(packets)
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
