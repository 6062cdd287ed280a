import Histogram
import LabCore

/// One simulated client's measurements: a histogram per group and step, and outcome counts,
/// owned by the client's task and merged by the runner at the end, so the hot path takes no lock.
struct ClientRecorder: Sendable {
    struct Group: Sendable {
        var steps: [Step: StepSamples] = [:]
        var errors: [String: UInt64] = [:]
        var iterations: UInt64 = 0
        /// Outcome counts (`StepRecorder.count`), by name.
        var outcomes: [String: UInt64] = [:]
    }

    var groups: [Group]
    /// Monotonic start of this client's first measured iteration, and end of its last.
    var firstStart: UInt64 = .max
    var lastEnd: UInt64 = 0
    var measured = 0
    var warmup = 0
    var stoppedByDeadline = false
    /// With `rounds` > 1: every successful measured sample, by round, group and step
    /// (`RoundResult` takes exact medians of them). Empty otherwise.
    var roundSamples: [[[Step: [UInt64]]]] = []

    init(groups: Int) {
        self.groups = Array(repeating: Group(), count: groups)
    }

    static func histogram() -> Histogram<UInt64> {
        Histogram<UInt64>(numberOfSignificantValueDigits: .three)
    }

    mutating func record(_ group: Int, _ step: Step, _ nanoseconds: UInt64) {
        self.groups[group].steps[step, default: StepSamples()].record(nanoseconds)
    }

    /// Records `steps`' timings and adds their outcome counts.
    mutating func record(_ group: Int, _ steps: IterationSteps) {
        for (step, nanoseconds) in steps.entries {
            self.record(group, step, nanoseconds)
        }
        self.count(group, steps)
    }

    /// Keeps an iteration's samples for the current round's medians.
    mutating func keepForRound(_ group: Int, _ steps: IterationSteps, exchange: UInt64) {
        guard !self.roundSamples.isEmpty else { return }
        let round = self.roundSamples.count - 1
        for (step, nanoseconds) in steps.entries {
            self.roundSamples[round][group][step, default: []].append(nanoseconds)
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

/// One client's samples of one step: a plain list while it is short, a histogram once it is
/// long. A histogram of nanoseconds (3 significant digits) holds about 100 KiB of counts from
/// its first sample of a millisecond on; 10,000 idle clients with a `connect` and a
/// `keygen.client` each would hold 2 GB of them for two samples apiece.
struct StepSamples: Sendable {
    /// Past this many samples (8 KiB), the histogram is the smaller.
    static let listLimit = 1024

    private var list: [UInt64] = []
    private var recorded: Histogram<UInt64>? = nil

    mutating func record(_ nanoseconds: UInt64) {
        if self.recorded != nil {
            self.recorded!.record(nanoseconds)
            return
        }
        self.list.append(nanoseconds)
        if self.list.count > Self.listLimit {
            self.recorded = self.histogram
            self.list = []
        }
    }

    /// Every sample, in a histogram.
    var histogram: Histogram<UInt64> {
        if let recorded = self.recorded { return recorded }
        var histogram = ClientRecorder.histogram()
        for value in self.list { histogram.record(value) }
        return histogram
    }
}

/// The steps of one iteration, each summed over both sides (e.g. the client's and the
/// server's `encode`), so every step gets one sample per iteration; and its outcome counts.
struct IterationSteps: StepRecorder {
    var entries: [(step: Step, nanoseconds: UInt64)] = []
    var outcomes: [String: UInt64] = [:]
    /// Test-only slowdowns (`Plan.slowdowns`).
    let slowdowns: [Step: Double]

    init(slowdowns: [Step: Double] = [:]) {
        self.entries.reserveCapacity(12)
        self.slowdowns = slowdowns
    }

    mutating func record(_ step: Step, nanoseconds: UInt64) {
        var nanoseconds = nanoseconds
        if !self.slowdowns.isEmpty, let fraction = self.slowdowns[step] {
            // A real slowdown: the iteration spends the extra time here, busy, and the step's
            // sample grows by the time actually spent.
            let start = Stopwatch.now()
            let until = start &+ UInt64(Double(nanoseconds) * fraction)
            var now = start
            while now < until { now = Stopwatch.now() }
            nanoseconds &+= now &- start
        }
        if let index = self.entries.firstIndex(where: { $0.step == step }) {
            self.entries[index].nanoseconds &+= nanoseconds
        } else {
            self.entries.append((step, nanoseconds))
        }
    }

    mutating func count(_ outcome: String, by amount: UInt64) {
        self.outcomes[outcome, default: 0] &+= amount
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
