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
            self.times[step, default: StepHistograms.histogram()].record(sample.nanoseconds)
            self.details[step, default: StepDetail()].record(sample)
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
                self.times[step, default: StepHistograms.intervalHistogram()].record(sample.nanoseconds)
            }
            for (step, sample) in extra {
                self.times[step, default: StepHistograms.intervalHistogram()].record(sample.nanoseconds)
            }
        }

        /// Adds `other` (the same group and interval, from another stripe).
        mutating func add(_ other: IntervalSlot) {
            self.errors += other.errors
            self.completed += other.completed
            for (step, histogram) in other.times {
                if self.times[step] == nil { self.times[step] = histogram } else { self.times[step]!.add(histogram) }
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

    /// Histograms for `groups` groups in enough stripes for this machine.
    init(groups: Int, stripes: Int = 2 * max(1, ProcessInfo.processInfo.activeProcessorCount)) {
        self.stripes = (0..<max(1, stripes)).map { _ in Stripe(groups: groups) }
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
            for (key, slot) in slots {
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

    /// An empty interval histogram: `RunIntervals`' layout, spanning 1 ns to 1 ms to start
    /// with (14 KiB; made once per step, interval and stripe) and growing past that.
    static func intervalHistogram() -> Histogram<UInt64> {
        var histogram = Histogram<UInt64>(
            lowestDiscernibleValue: 1,
            highestTrackableValue: 1 << 20,
            numberOfSignificantValueDigits: RunIntervals.significantDigits
        )
        histogram.autoResize = true
        return histogram
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
