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
    private let latest = Mutex<IntervalFigures?>(nil)

    /// The exchanges that started in one interval of the run, over every group, as the
    /// interval closed (exchanges still running then are not in it yet).
    public struct IntervalFigures: Sendable, Equatable {
        /// Which interval (`RunIntervals`).
        public var index: Int
        /// Its width, in nanoseconds.
        public var width: UInt64
        /// Exchanges that started in it and succeeded.
        public var exchanges: UInt64
        /// Exchanges that started in it and failed.
        public var errors: UInt64
        /// Their median and 99th percentile, in nanoseconds; nil without exchanges.
        public var p50: UInt64?
        /// The 99th percentile.
        public var p99: UInt64?
        /// The same figures group by group, in the run's group order (`lab run --live`).
        public var groups: [Group] = []

        /// One group's exchanges that started in the interval.
        public struct Group: Sendable, Equatable {
            /// `cx-x25519 x25519 swift-crypto in-process` (`GroupKey.description`).
            public var key: String
            public var exchanges: UInt64
            public var errors: UInt64
            public var p50: UInt64?
            public var p99: UInt64?

            /// Figures.
            public init(key: String, exchanges: UInt64, errors: UInt64, p50: UInt64?, p99: UInt64?) {
                self.key = key
                self.exchanges = exchanges
                self.errors = errors
                self.p50 = p50
                self.p99 = p99
            }
        }

        /// Figures.
        public init(
            index: Int,
            width: UInt64,
            exchanges: UInt64,
            errors: UInt64,
            p50: UInt64?,
            p99: UInt64?,
            groups: [Group] = []
        ) {
            self.index = index
            self.width = width
            self.exchanges = exchanges
            self.errors = errors
            self.p50 = p50
            self.p99 = p99
            self.groups = groups
        }
    }

    /// A counter for `planned` iterations.
    public init(planned: Int) {
        self.planned = planned
        self.startedAt = Stopwatch.now()
    }

    /// Iterations finished so far.
    public var completed: Int { self.done.load(ordering: .relaxed) }
    /// Iterations failed so far.
    public var errors: Int { self.failed.load(ordering: .relaxed) }

    /// The last interval that closed, or nil before the first (or without intervals).
    public var lastInterval: IntervalFigures? { self.latest.withLock { $0 } }

    func publish(_ figures: IntervalFigures) {
        self.latest.withLock { $0 = figures }
    }

    func finished(failed: Bool) {
        self.done.add(1, ordering: .relaxed)
        if failed { self.failed.add(1, ordering: .relaxed) }
    }
}
