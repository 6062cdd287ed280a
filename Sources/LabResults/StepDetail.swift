public import Histogram
public import LabCore

/// What a step's samples show beside their wall times: how many were preempted, the times of
/// those that were not, CPU time, and in a counted run the work each did.
public struct StepDetail: Sendable {
    /// Samples during which the step's thread was switched out involuntarily
    /// (`StepSample.preempted`).
    public var preempted: UInt64
    /// Wall times of the samples that were not preempted.
    public var unpreempted: Histogram<UInt64>
    /// CPU times of the samples that have one (none for the exchange).
    public var cpu: Histogram<UInt64>?
    /// The counted work of each sample, in a counted run; nil otherwise.
    public var counts: WorkCounts?

    /// No samples yet.
    public init() {
        self.preempted = 0
        self.unpreempted = Self.histogram()
        self.cpu = nil
        self.counts = nil
    }

    /// Figures given directly (as `results.json` stores them).
    public init(preempted: UInt64, unpreempted: Histogram<UInt64>, cpu: Histogram<UInt64>?, counts: WorkCounts?) {
        self.preempted = preempted
        self.unpreempted = unpreempted
        self.cpu = cpu
        self.counts = counts
    }

    /// Adds one sample.
    public mutating func record(_ sample: StepSample) {
        if !sample.watched {
            // Nothing known of its preemption: in neither count.
        } else if sample.preempted {
            self.preempted += 1
        } else {
            self.unpreempted.recordWidening(sample.nanoseconds)
        }
        if let cpu = sample.cpuNanoseconds {
            if self.cpu == nil { self.cpu = Self.histogram() }
            self.cpu!.recordWidening(cpu)
        }
        if let instructions = sample.instructions {
            if self.counts == nil { self.counts = WorkCounts() }
            self.counts!.instructions.append(instructions)
            self.counts!.allocations.append(sample.allocations ?? 0)
        }
    }

    /// Adds `other`'s samples (the same step, another stripe, client or shard).
    public mutating func merge(_ other: StepDetail) {
        self.preempted += other.preempted
        self.unpreempted.addWidening(other.unpreempted)
        if let cpu = other.cpu {
            if self.cpu == nil { self.cpu = cpu } else { self.cpu!.addWidening(cpu) }
        }
        if let counts = other.counts {
            if self.counts == nil { self.counts = counts } else { self.counts!.append(counts) }
        }
    }

    /// A step's histogram: 1 ns to 1 ms (90 KiB) to start with, three significant digits,
    /// growing past that. Grown from nothing, each histogram resized a dozen times on the
    /// way to its largest sample, and the package's resize appends zeros through
    /// unspecialised generic code: 2.6% of an in-process x25519 run's measured phase went
    /// there (perf, release).
    ///
    /// In a counted run, 1 ns to 2^42 ns (73 minutes, 270 KiB) from the start: a resize
    /// happens when a sample's time first passes the range, so at a moment that depends on
    /// the machine, and its allocations then leave the heap, and the runtime's metadata
    /// caches, in a different state in each process, which moved the instructions of the
    /// steps counted after it by up to 1.5% from run to run.
    public static func histogram() -> Histogram<UInt64> {
        Histograms.empty(digits: .three, spanning: WorkCounter.isActive ? 1 << 42 : 1 << 20)
    }
}

/// The work each sample of a step did, counted (not timed) in a counted run: deterministic
/// for the same binary, inputs and environment, whatever else the machine does.
public struct WorkCounts: Codable, Sendable, Equatable {
    /// Instructions each sample executed, in the order the samples ran.
    public var instructions: [UInt64]
    /// Calls into the allocator each sample made, in the same order.
    public var allocations: [UInt64]

    /// No samples.
    public init(instructions: [UInt64] = [], allocations: [UInt64] = []) {
        self.instructions = instructions
        self.allocations = allocations
    }

    /// Appends `other`'s samples.
    public mutating func append(_ other: WorkCounts) {
        self.instructions += other.instructions
        self.allocations += other.allocations
    }

    /// The median of the instruction counts (`Statistics.median`), or nil with no samples.
    public var medianInstructions: UInt64? { Statistics.median(self.instructions) }

    /// The median of the allocation counts, or nil with no samples.
    public var medianAllocations: UInt64? { Statistics.median(self.allocations) }

    /// The relative spread of the instruction counts around their median: (largest − smallest) / median.
    public var spread: Double? {
        guard let median = self.medianInstructions, median > 0,
            let low = self.instructions.min(), let high = self.instructions.max()
        else { return nil }
        return Double(high - low) / Double(median)
    }

    /// The relative spread of the central 80% of the samples (10th to 90th percentile) around
    /// the median: how much the step's work varies from sample to sample, without the first
    /// call's one-time work or a rare slow path.
    public var centralSpread: Double? {
        guard let median = self.medianInstructions, median > 0 else { return nil }
        let sorted = self.instructions.sorted()
        guard let low = Statistics.percentile(sorted: sorted, 10), let high = Statistics.percentile(sorted: sorted, 90)
        else { return nil }
        return Double(high - low) / Double(median)
    }
}
