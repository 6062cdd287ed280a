package import LabCore
import Synchronization

/// Up to 255 parts for each of 32 slowed steps, in four words: counters that never allocate
/// (a step past the 32nd counts as its first part every time; the lab names 23 steps in
/// all). Not an `InlineArray`: unspecialised in a debug build, its accessors allocated.
struct PartCounts: Sendable {
    private var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)

    subscript(index: Int) -> Int {
        guard index >= 0 && index < 32 else { return 0 }
        return Int(truncatingIfNeeded: self.word(index / 8) >> Self.shift(index) & 0xFF)
    }

    mutating func increment(_ index: Int) {
        guard index >= 0 && index < 32, self[index] < 255 else { return }
        let one = UInt64(1) << Self.shift(index)
        switch index / 8 {
        case 0: self.words.0 &+= one
        case 1: self.words.1 &+= one
        case 2: self.words.2 &+= one
        default: self.words.3 &+= one
        }
    }

    private func word(_ number: Int) -> UInt64 {
        switch number {
        case 0: self.words.0
        case 1: self.words.1
        case 2: self.words.2
        default: self.words.3
        }
    }

    private static func shift(_ index: Int) -> UInt64 { UInt64(8 * (index % 8)) }
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
package final class StepSlowdown: Sendable {
    /// Measurements of a step that fix its amount of added work.
    /// (3 in a counted run, where every measurement of a step but the first counts alike.)
    package static var calibrationSamples: Int { WorkCounter.isActive ? 3 : 64 }

    /// The parts of a step in one iteration that can be slowed (the client's and the server's
    /// `decode` are two); a step recorded more often has its later parts left as they are.
    static let partsPerStep = 8
    /// Slowed steps a counted run leaves room for (the lab names 23 steps).
    static let maxSlowedSteps = 32

    /// A slowed part of a step in one group: what sizes its added work.
    private struct Entry {
        /// The rounds fixed from the `calibrationSamples`-th measurement on; -1 until then.
        var rounds = -1
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
        /// How many own measurements, and round costs (nanoseconds per round, each time
        /// added work was timed), the calibration holds so far.
        var samples = 0
        var costs = 0
    }

    /// Every entry and the calibration's values, allocated once, when the run starts: in a
    /// counted run the bookkeeping between steps allocates nothing, because an allocation
    /// only slowed runs make moves the heap under the steps measured after it, and with it
    /// their counts (a dictionary of entries and one of parts allocated about 40 times per
    /// exchange and put x25519 `decrypt` 1.9% above the baseline in a run that slowed
    /// `decode`, 2026-11-24). For the same reason nothing here goes through the standard
    /// library's generic collection code, whose accessors allocate in a debug build.
    private struct Table: ~Copyable {
        let entries: UnsafeMutablePointer<Entry>
        let count: Int
        /// Per entry, `calibration` own measurements, then `calibration` round costs.
        let values: UnsafeMutablePointer<Double>
        /// Room to sort `calibration` values in.
        let scratch: UnsafeMutablePointer<Double>
        let calibration: Int
        /// In a counted run: the instructions one round of `spin` takes (`prepareCounting`).
        var roundInstructions: Double = 1

        init(count: Int, calibration: Int) {
            self.count = count
            self.calibration = calibration
            self.entries = .allocate(capacity: count)
            self.entries.initialize(repeating: Entry(), count: count)
            self.values = .allocate(capacity: count * 2 * calibration)
            self.values.initialize(repeating: 0, count: count * 2 * calibration)
            self.scratch = .allocate(capacity: calibration)
            self.scratch.initialize(repeating: 0, count: calibration)
        }

        deinit {
            self.entries.deallocate()
            self.values.deallocate()
            self.scratch.deallocate()
        }

        func samples(_ index: Int) -> UnsafeMutablePointer<Double> { self.values + index * 2 * self.calibration }
        func costs(_ index: Int) -> UnsafeMutablePointer<Double> { self.samples(index) + self.calibration }

        /// The median of `count` values at `values` (the upper one of an even count), sorted
        /// in `scratch` by insertion.
        func median(_ values: UnsafeMutablePointer<Double>, _ count: Int) -> Double {
            for index in 0..<count {
                let value = values[index]
                var place = index
                while place > 0 && self.scratch[place - 1] > value {
                    self.scratch[place] = self.scratch[place - 1]
                    place -= 1
                }
                self.scratch[place] = value
            }
            return self.scratch[count / 2]
        }
    }

    private let fractions: [Step: Double]
    /// Per group, whether it is slowed (`--test-slowdown-provider`); nil: every group.
    private let slowedGroups: [Bool]?
    /// Each slowed step's place among the entries (by name order).
    private let slots: [Step: Int]
    private let groups: Int
    /// How many entries the slowed steps have (the table has one more).
    private let entries: Int
    private let table: Mutex<Table>
    /// What one round of `spin` cost at start, in nanoseconds: the cost until rounds added to
    /// the step were timed.
    private let roundNanoseconds: Double

    /// For a run of `groups` groups; nil when nothing is slowed, except in a counted run.
    ///
    /// A counted run has one whether or not a step is slowed, and its bookkeeping runs once
    /// here, on an entry of its own: the first use of a generic type instantiates its
    /// metadata into the Swift runtime's cache, whose lookups every step makes, so a run in
    /// which only the slowed runs brought the slowdown's types in counted each step up to
    /// 1.7% more in a debug build (the cache's probes and key comparisons, from callgrind's
    /// per-step dumps of a run with `sign` slowed against one without, 2026-11-24).
    package init?(_ fractions: [Step: Double], groups: Int, slowed: [Bool]? = nil) {
        self.slowedGroups = slowed
        guard !fractions.isEmpty || WorkCounter.isActive else { return nil }
        // Allocated at the same sizes whatever is slowed (room for `maxSlowedSteps`), so that
        // a counted run that slows a step leaves the heap as one that slows none: a table or
        // dictionaries sized to the slowed steps moved the buffers of the steps after them,
        // and AES-GCM's count follows its buffers' alignment (x25519 `encrypt` +319
        // instructions in a run that slowed `decode`, 2026-11-27).
        var kept = [Step: Double](minimumCapacity: Self.maxSlowedSteps)
        for (step, fraction) in fractions { kept[step] = fraction }
        self.fractions = kept
        let slowed = fractions.keys.sorted()
        var slots = [Step: Int](minimumCapacity: Self.maxSlowedSteps)
        for (offset, step) in slowed.enumerated() { slots[step] = offset }
        self.slots = slots
        self.groups = max(1, groups)
        self.entries = self.groups * slowed.count * Self.partsPerStep
        // One entry more: the bookkeeping's first run, below.
        let room = WorkCounter.isActive ? max(slowed.count, Self.maxSlowedSteps) : slowed.count
        let capacity = self.groups * room * Self.partsPerStep + 1
        self.table = Mutex(Table(count: capacity, calibration: Self.calibrationSamples))
        // The cheapest of five timings of 100,000 rounds: the cost with the least noise in it.
        let rounds = 100_000
        var best = UInt64.max
        for _ in 0..<5 {
            let start = Stopwatch.now()
            AddedWork.spin(rounds)
            best = min(best, Stopwatch.now() &- start)
        }
        self.roundNanoseconds = max(Double(best) / Double(rounds), 0.01)
        // The bookkeeping's code paths, once, on the spare entry: `observe`'s lookup in
        // `fractions` and the three table updates.
        _ = self.fractions[.decode]
        _ = self.rounds(at: self.entries)
        self.added(at: self.entries, took: 1)
        self.observe(at: self.entries, fraction: 1, measure: 1)
    }

    /// Where `step` is among the slowed steps; nil if it is not slowed (and costs its
    /// recorder nothing more).
    func slot(of step: Step) -> Int? { self.slots[step] }

    /// In a counted run, once counting has started and before any step runs: counts what one
    /// round of `spin` takes, over 100,000 rounds.
    func prepareCounting() {
        guard let before = WorkCounter.read() else { return }
        let rounds = 100_000
        AddedWork.spin(rounds)
        guard let after = WorkCounter.read() else { return }
        let perRound = max(Double(after.instructions &- before.instructions) / Double(rounds), 0.01)
        self.table.withLock { $0.roundInstructions = perRound }
    }

    /// The entry of `part` of `step` in `group`, if that part can be slowed.
    private func index(group: Int, _ step: Step, part: Int) -> Int? {
        guard let slot = self.slots[step], group >= 0, group < self.groups, part >= 0, part < Self.partsPerStep,
            self.slowedGroups.map({ group < $0.count && $0[group] }) ?? true
        else { return nil }
        return (group * self.slots.count + slot) * Self.partsPerStep + part
    }

    /// The rounds to add to `part` of `step` in `group`: the fraction of the median of the
    /// samples `observe` saw so far (none before the first), fixed from the
    /// `calibrationSamples`-th on. Called before the step runs, outside what it measures.
    package func rounds(group: Int, _ step: Step, part: Int) -> Int {
        guard let index = self.index(group: group, step, part: part) else { return 0 }
        return self.rounds(at: index)
    }

    private func rounds(at index: Int) -> Int {
        let counted = WorkCounter.isActive
        return self.table.withLock { table in
            let perRound = counted ? table.roundInstructions : self.roundNanoseconds
            let entry = table.entries + index
            let rounds = entry.pointee.rounds >= 0 ? entry.pointee.rounds : entry.pointee.planned
            entry.pointee.added = Double(rounds) * perRound
            entry.pointee.addedRounds = rounds
            entry.pointee.asked = true
            return rounds
        }
    }

    /// What the rounds just added to `part` of `step` in `group` took, timed inside the step:
    /// taken out of the sample `observe` sees next, and the cost of a round from now on.
    /// (In a counted run the count of a round is exact, and the time is not what is sized.)
    package func added(group: Int, _ step: Step, part: Int, took nanoseconds: UInt64) {
        guard !WorkCounter.isActive, let index = self.index(group: group, step, part: part) else { return }
        self.added(at: index, took: nanoseconds)
    }

    private func added(at index: Int, took nanoseconds: UInt64) {
        self.table.withLock { table in
            let entry = table.entries + index
            guard entry.pointee.asked, entry.pointee.addedRounds > 0 else { return }
            entry.pointee.added = Double(nanoseconds)
            if entry.pointee.rounds < 0, entry.pointee.costs < table.calibration {
                table.costs(index)[entry.pointee.costs] = Double(nanoseconds) / Double(entry.pointee.addedRounds)
                entry.pointee.costs += 1
            }
        }
    }

    /// Sees `part` of `step` in `group` as recorded (its time, or in a counted run its
    /// instructions), takes out what was added to it, and plans the next sample's amount.
    package func observe(group: Int, _ step: Step, part: Int, _ sample: StepSample) {
        guard let index = self.index(group: group, step, part: part), let fraction = self.fractions[step],
            let measure = WorkCounter.isActive ? sample.instructions : sample.nanoseconds
        else { return }
        self.observe(at: index, fraction: fraction, measure: measure)
    }

    private func observe(at index: Int, fraction: Double, measure: UInt64) {
        let counted = WorkCounter.isActive
        self.table.withLock { table in
            let entry = table.entries + index
            guard entry.pointee.asked else { return }
            let startCost = counted ? table.roundInstructions : self.roundNanoseconds
            let costs = entry.pointee.costs
            let perRound = costs == 0 ? startCost : max(table.median(table.costs(index), costs), 0.01)
            let own = max(0, Double(measure) - entry.pointee.added)
            entry.pointee.added = 0
            entry.pointee.asked = false
            guard entry.pointee.rounds < 0 else { return }
            table.samples(index)[entry.pointee.samples] = own
            entry.pointee.samples += 1
            let median = table.median(table.samples(index), entry.pointee.samples)
            entry.pointee.planned = max(1, Int((median * fraction / perRound).rounded()))
            if entry.pointee.samples == table.calibration { entry.pointee.rounds = entry.pointee.planned }
        }
    }

    /// The slowed steps whose added work was never fixed in any group: not timed with
    /// `measure`, or measured fewer than `calibrationSamples` times.
    package var unslowed: [Step] {
        let fixed = self.table.withLock { table in
            (0..<self.entries).filter { table.entries[$0].rounds >= 0 }.map { $0 / Self.partsPerStep % self.slots.count }
        }
        return self.slots.filter { !fixed.contains($0.value) }.keys.sorted()
    }
}
