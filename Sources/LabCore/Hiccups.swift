internal import CLabCounting
import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// What a busy thread loses to its machine (`lab hiccups`): every gap of 5 µs or more
/// between two readings of the clock in a loop that does nothing else but touch memory,
/// sorted by what the guest's kernel saw over it.
///
/// A step's sample can be marked preempted only for what the guest sees: a context switch,
/// an interrupt, wall time beyond its CPU time (`ThreadUsage.disturbed`).
/// On a virtual machine whose host takes the virtual CPU away without reporting it, the
/// rest lands in the step's time as if the step had done it. The meter measures how often
/// that happens, so that a reader knows from which step length on a tail percentile is the
/// host's and not the step's (`unseenTailLength`; docs/performance.md, "Hiccups").
public struct Hiccups: Sendable, Equatable, Codable {
    /// What the guest saw of a gap.
    public enum Cause: String, Sendable, CaseIterable, Codable, CodingKeyRepresentable {
        /// The thread was switched out: the guest's scheduler ran something else.
        case switched
        /// The thread took an interrupt (only where interrupts are counted:
        /// `interruptsCounted`).
        case interrupted
        /// Neither: the host ran something else on the CPU, or the hardware stalled.
        case unseen
    }

    /// The gap sizes counted, by their lower bounds in nanoseconds: [5, 10), [10, 20),
    /// [20, 50), [50, 100), [100, 1,000) µs, and 1 ms or more.
    public static let bucketFloors: [UInt64] = [5_000, 10_000, 20_000, 50_000, 100_000, 1_000_000]

    /// The gaps of one cause.
    public struct Tally: Sendable, Equatable, Codable {
        /// How many fell in each bucket (`bucketFloors`).
        public var counts: [UInt64]
        /// Their summed length, in nanoseconds.
        public var nanoseconds: UInt64
        /// The longest, in nanoseconds (0 without any).
        public var longest: UInt64

        /// A tally.
        public init(
            counts: [UInt64] = Array(repeating: 0, count: Hiccups.bucketFloors.count),
            nanoseconds: UInt64 = 0,
            longest: UInt64 = 0
        ) {
            self.counts = counts
            self.nanoseconds = nanoseconds
            self.longest = longest
        }

        /// Gaps of at least `floor` nanoseconds (a bucket's lower bound).
        public func count(atLeast floor: UInt64) -> UInt64 {
            zip(Hiccups.bucketFloors, self.counts).reduce(0) { $0 + ($1.0 >= floor ? $1.1 : 0) }
        }
    }

    /// Threads measured at once (their figures are summed).
    public var threads: Int
    /// Wall time measured, summed over the threads, in nanoseconds.
    public var nanoseconds: UInt64
    /// The threads' CPU time over it, in nanoseconds.
    public var cpuNanoseconds: UInt64
    /// Readings of the clock.
    public var readings: UInt64
    /// The loop's working set, in bytes.
    public var workingSetBytes: UInt64
    /// Whether interrupts were counted; where they were not, an interrupt's gap is `unseen`.
    public var interruptsCounted: Bool
    /// The gaps by what the guest saw.
    public var tallies: [Cause: Tally]
    /// Stalls made on purpose (tests only).
    public var testStalls: UInt64

    /// Figures given directly.
    public init(
        threads: Int,
        nanoseconds: UInt64,
        cpuNanoseconds: UInt64,
        readings: UInt64,
        workingSetBytes: UInt64,
        interruptsCounted: Bool,
        tallies: [Cause: Tally],
        testStalls: UInt64 = 0
    ) {
        self.threads = threads
        self.nanoseconds = nanoseconds
        self.cpuNanoseconds = cpuNanoseconds
        self.readings = readings
        self.workingSetBytes = workingSetBytes
        self.interruptsCounted = interruptsCounted
        self.tallies = tallies
        self.testStalls = testStalls
    }

    /// The gaps of `cause`.
    public subscript(cause: Cause) -> Tally { self.tallies[cause] ?? Tally() }

    /// Gaps of `cause` of at least `floor` nanoseconds per second of measured time.
    public func rate(_ cause: Cause, atLeast floor: UInt64) -> Double {
        guard self.nanoseconds > 0 else { return 0 }
        return Double(self[cause].count(atLeast: floor)) * 1e9 / Double(self.nanoseconds)
    }

    /// The share of the samples of a step that runs `stepNanoseconds` that an unseen gap of
    /// `floor` or more falls into: the gaps come at random, so a sample of length d catches
    /// one with the chance rate × d (while that is small).
    public func unseenShare(stepNanoseconds: UInt64, atLeast floor: UInt64) -> Double {
        min(1, self.rate(.unseen, atLeast: floor) * Double(stepNanoseconds) / 1e9)
    }

    /// The step length, in nanoseconds, from which more than `share` of a step's samples
    /// (0.001 for the p99.9) catch an unseen gap of `floor` or more, so that the step's
    /// percentile past 1 − `share` is the host's gaps rather than the step's work; nil when
    /// no such gap was seen.
    public func unseenTailLength(share: Double, atLeast floor: UInt64) -> UInt64? {
        let rate = self.rate(.unseen, atLeast: floor)
        guard rate > 0 else { return nil }
        return UInt64((share / rate * 1e9).rounded(.up))
    }

    /// Adds another thread's figures.
    public mutating func add(_ other: Hiccups) {
        self.threads += other.threads
        self.nanoseconds += other.nanoseconds
        self.cpuNanoseconds += other.cpuNanoseconds
        self.readings += other.readings
        self.interruptsCounted = self.interruptsCounted && other.interruptsCounted
        self.testStalls += other.testStalls
        for cause in Cause.allCases {
            var tally = self[cause]
            let more = other[cause]
            tally.counts = zip(tally.counts, more.counts).map { $0 + $1 }
            tally.nanoseconds += more.nanoseconds
            tally.longest = max(tally.longest, more.longest)
            self.tallies[cause] = tally
        }
    }

    /// A stall the meter makes itself, for tests: every `every` nanoseconds it spins for
    /// `length` without reading the clock.
    public struct TestStall: Sendable {
        public var every: UInt64
        public var length: UInt64

        /// A stall of `length` every `every` nanoseconds.
        public init(every: UInt64, length: UInt64) {
            self.every = every
            self.length = length
        }
    }

    /// Measures the calling thread for `seconds` (pinned to `cpu` if given), touching
    /// `workingSetBytes` of memory between readings of the clock.
    public static func measure(
        seconds: Double,
        cpu: Int? = nil,
        workingSetBytes: UInt64 = 64 * 1_024,
        testStall: TestStall? = nil
    ) throws(LabError) -> Hiccups {
        var options = c_lab_hiccup_options(
            seconds: seconds,
            cpu: Int32(cpu ?? -1),
            working_set_bytes: workingSetBytes,
            test_stall_every_nanoseconds: testStall?.every ?? 0,
            test_stall_nanoseconds: testStall?.length ?? 0
        )
        var result = c_lab_hiccups()
        let status = c_lab_hiccups_measure(&options, &result)
        guard status == 0 else {
            throw LabError(
                .unsupported,
                "the hiccup meter could not run (\(String(cString: strerror(status)))): "
                    + "seconds must be above 0, the working set at least 64 bytes, the CPU one this process may use"
            )
        }
        // The C result's rows, by the C index of each cause.
        let rows: [(Cause, Int32)] = [
            (.switched, C_LAB_HICCUP_SWITCHED), (.interrupted, C_LAB_HICCUP_INTERRUPTED),
            (.unseen, C_LAB_HICCUP_UNSEEN),
        ]
        let width = Self.bucketFloors.count
        func tally(_ row: Int) -> Tally {
            let counts = withUnsafeBytes(of: result.gaps) {
                Array($0.bindMemory(to: UInt64.self)[(row * width)..<((row + 1) * width)])
            }
            let longest = withUnsafeBytes(of: result.longest) { $0.bindMemory(to: UInt64.self)[row] }
            let summed = withUnsafeBytes(of: result.gap_nanoseconds) { $0.bindMemory(to: UInt64.self)[row] }
            return Tally(counts: counts, nanoseconds: summed, longest: longest)
        }
        return Hiccups(
            threads: 1,
            nanoseconds: result.nanoseconds,
            cpuNanoseconds: result.cpu_nanoseconds,
            readings: result.readings,
            workingSetBytes: workingSetBytes,
            interruptsCounted: result.interrupts_counted != 0,
            tallies: Dictionary(uniqueKeysWithValues: rows.map { ($0.0, tally(Int($0.1))) }),
            testStalls: result.test_stalls
        )
    }

    /// The CPUs this thread may run on, in ascending order: not always 0 to cores − 1 (a
    /// container's cpuset may give it CPUs 2 and 3).
    public static func allowedCPUs() -> [Int] {
        var cpus = [Int32](repeating: 0, count: 1_024)
        let count = Int(c_lab_allowed_cpus(&cpus, Int32(cpus.count)))
        guard count > 0 else { return [0] }
        return cpus.prefix(min(count, cpus.count)).map(Int.init)
    }

    /// Measures `threads` threads at once for `seconds`, thread `k` pinned to the `k`-th of
    /// the CPUs it may use, modulo their number (`pinned`), or left to the scheduler, and sums
    /// their figures.
    public static func measure(
        threads: Int,
        seconds: Double,
        pinned: Bool = true,
        workingSetBytes: UInt64 = 64 * 1_024
    ) throws(LabError) -> Hiccups {
        let cpus = Self.allowedCPUs()
        let results = Mutex<[Result<Hiccups, LabError>]>([])
        let done = DispatchSemaphore(value: 0)
        for index in 0..<max(1, threads) {
            let cpu = pinned ? cpus[index % cpus.count] : nil
            Thread.detachNewThread {
                let result = Result { () throws(LabError) -> Hiccups in
                    try Hiccups.measure(seconds: seconds, cpu: cpu, workingSetBytes: workingSetBytes)
                }
                results.withLock { $0.append(result) }
                done.signal()
            }
        }
        for _ in 0..<max(1, threads) { done.wait() }
        var total: Hiccups?
        for result in results.withLock({ $0 }) {
            let one = try result.get()
            if total == nil { total = one } else { total!.add(one) }
        }
        return total!
    }
}
