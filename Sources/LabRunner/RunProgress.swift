import LabCore
import Synchronization

/// Live counts of a run, read by a progress display while clients add to them.
public final class RunProgress: Sendable {
    /// Iterations planned (warm-up included); for the open model, from rate × duration.
    public let planned: Int
    private let done = Atomic<Int>(0)
    private let failed = Atomic<Int>(0)
    /// When the run started (monotonic nanoseconds).
    public let startedAt: UInt64

    /// A counter for `planned` iterations.
    public init(planned: Int) {
        self.planned = planned
        self.startedAt = Stopwatch.now()
    }

    /// Iterations finished so far.
    public var completed: Int { self.done.load(ordering: .relaxed) }
    /// Iterations failed so far.
    public var errors: Int { self.failed.load(ordering: .relaxed) }

    func finished(failed: Bool) {
        self.done.add(1, ordering: .relaxed)
        if failed { self.failed.add(1, ordering: .relaxed) }
    }
}
