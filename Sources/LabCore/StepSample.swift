public import CLabCounting
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One measurement of a step: its wall time, and what explains that time.
///
/// The summed sample of a step that both sides ran in one iteration (the client's and the
/// server's `decode`) adds the figures up, and is preempted if either part was.
public struct StepSample: Sendable, Equatable {
    /// Wall time, in nanoseconds.
    public var nanoseconds: UInt64
    /// CPU time of the thread that ran the step, in nanoseconds (its CPU clock); nil for a
    /// step not run start to end by one thread (the exchange, which awaits).
    public var cpuNanoseconds: UInt64?
    /// Whether the step's thread was switched out involuntarily while the step ran (the
    /// scheduler gave its core to another thread), took an interrupt (where they are
    /// counted: `ThreadUsage.countsInterrupts`), or spent more than `offCPUAllowance` of the
    /// step off its CPU without such a switch (the host took the virtual CPU away: steal
    /// time, which the guest's scheduler does not see): its wall time then includes time
    /// the step did not use (`ThreadUsage.disturbed`). For the exchange, which moves between
    /// threads and has no CPU time, any involuntary switch of the process's threads.
    public var preempted: Bool
    /// Whether the step's usage was read (`StepRecorder.readsUsage`): if not, `preempted`
    /// is false and says nothing, and `cpuNanoseconds` is nil.
    public var watched: Bool

    /// Wall time beyond its CPU time that marks a sample as preempted: 100 µs.
    public static let offCPUAllowance: UInt64 = 100_000
    /// Instructions executed, counted by callgrind in a counted run (`lab run --counted`);
    /// nil otherwise.
    public var instructions: UInt64?
    /// Calls into the allocator, counted by callgrind in a counted run; nil otherwise.
    public var allocations: UInt64?

    /// A sample.
    public init(
        nanoseconds: UInt64,
        cpuNanoseconds: UInt64? = nil,
        preempted: Bool = false,
        watched: Bool = true,
        instructions: UInt64? = nil,
        allocations: UInt64? = nil
    ) {
        self.nanoseconds = nanoseconds
        self.cpuNanoseconds = cpuNanoseconds
        self.preempted = preempted
        self.watched = watched
        self.instructions = instructions
        self.allocations = allocations
    }

    /// Adds `other` (the same step's other part in one iteration) to this sample.
    public mutating func add(_ other: StepSample) {
        self.nanoseconds &+= other.nanoseconds
        self.cpuNanoseconds = Self.sum(self.cpuNanoseconds, other.cpuNanoseconds)
        self.preempted = self.preempted || other.preempted
        self.watched = self.watched && other.watched
        self.instructions = Self.sum(self.instructions, other.instructions)
        self.allocations = Self.sum(self.allocations, other.allocations)
    }

    private static func sum(_ a: UInt64?, _ b: UInt64?) -> UInt64? {
        guard let a, let b else { return nil }
        return a &+ b
    }
}

/// The calling thread's CPU time, involuntary context switches (`getrusage(RUSAGE_THREAD)`)
/// and the interrupts it took: two system calls, `getrusage` and one `read` of a perf event
/// group (the task clock and the kernel's interrupt tracepoints), or where that group
/// cannot be opened (not root), `getrusage` and the thread's CPU clock, without interrupts.
public struct ThreadUsage: Sendable, Equatable {
    /// CPU time so far, in nanoseconds.
    public var cpuNanoseconds: UInt64
    /// Involuntary context switches so far.
    public var involuntarySwitches: UInt64
    /// Interrupts taken while the thread ran, so far; nil where they cannot be counted.
    public var interrupts: UInt64?

    /// Now, for the calling thread; nil if the kernel refuses (never seen on Linux).
    @inlinable
    public static func now() -> ThreadUsage? {
        var cpu: UInt64 = 0
        var switches: UInt64 = 0
        var interrupts: UInt64 = 0
        guard c_lab_thread_usage(&cpu, &switches, &interrupts) == 0 else { return nil }
        return ThreadUsage(
            cpuNanoseconds: cpu,
            involuntarySwitches: switches,
            interrupts: interrupts == .max ? nil : interrupts
        )
    }

    /// Whether this process can count the interrupts its threads take (root, or
    /// `perf_event_paranoid` and tracefs letting it read the kernel's tracepoints).
    public static var countsInterrupts: Bool { Self.now()?.interrupts != nil }

    /// Whether a step timed at `wallNanoseconds` between the readings `before` and `after`
    /// of its thread ran with its CPU to itself: not if the thread was switched out
    /// involuntarily (the scheduler gave its core to another thread), took an interrupt
    /// (the scheduler's tick among them: its handler's time is charged to the thread it
    /// interrupted), or was off its CPU for over `StepSample.offCPUAllowance` without a
    /// switch it sees (the host took the virtual CPU away). The CPU clock's readings
    /// bracket more than the wall clock's, so any excess of wall time is time off the CPU.
    @inlinable
    public static func disturbed(from before: ThreadUsage, to after: ThreadUsage, wallNanoseconds: UInt64) -> Bool {
        after.involuntarySwitches != before.involuntarySwitches
            || (before.interrupts != nil && after.interrupts != nil && after.interrupts != before.interrupts)
            || wallNanoseconds > (after.cpuNanoseconds &- before.cpuNanoseconds) &+ StepSample.offCPUAllowance
    }

    /// The process's involuntary context switches so far, every thread included.
    public static func processInvoluntarySwitches() -> UInt64? {
        var switches: UInt64 = 0
        return c_lab_process_involuntary_switches(&switches) == 0 ? switches : nil
    }

    /// A reading.
    public init(cpuNanoseconds: UInt64, involuntarySwitches: UInt64, interrupts: UInt64? = nil) {
        self.cpuNanoseconds = cpuNanoseconds
        self.involuntarySwitches = involuntarySwitches
        self.interrupts = interrupts
    }
}

/// Callgrind's counters, read by a counted run (`lab run --counted`, which runs the lab
/// under `valgrind --tool=callgrind`): instructions and allocator calls since the run's
/// counting began. Inactive (every reading nil, at the cost of one load) in any other run.
///
/// The instructions are those outside the allocator: the inclusive cost of every call into
/// `malloc`, `free` and the rest is taken out. glibc's allocator takes a different path
/// (its per-thread cache, a bin, splitting the top chunk) by the state the whole process
/// left the heap in, so its share of a step moved with anything that allocated before it:
/// x25519 `decode` counted 187,619 to 189,963 instructions in one build as the scenario's
/// text or the command line changed, more than the gate's 1% allowance; without the
/// allocator, 179,452 to 179,554 (2026-11-24, docs/performance.md). What a step asks of
/// the allocator is still counted, as its calls (`allocations`).
///
/// Each reading makes callgrind dump its counts since the previous reading to a file, which
/// is read and deleted with callgrind's collection off, so the readings themselves add only
/// a fixed few instructions to what they bracket. Readings are serialised: a counted run
/// has one client, and under Valgrind one thread runs at a time anyway.
public enum WorkCounter {
    /// The environment variable through which `lab run --counted` gives the child under
    /// Valgrind callgrind's output file (`--callgrind-out-file`).
    public static let outputVariable = "LAB_CALLGRIND_OUT"

    /// What a counted run counts with, for reports:
    /// `instructions outside the allocator and libdispatch (callgrind, valgrind-3.19.0)`.
    public static var counterName: String {
        let version = getenv("LAB_VALGRIND_VERSION").map { String(cString: $0) } ?? "valgrind"
        return "instructions outside the allocator and libdispatch (callgrind, \(version))"
    }

    /// Whether this process runs under Valgrind.
    public static var isUnderValgrind: Bool { c_lab_on_valgrind() != 0 }

    private struct State {
        var instrumenting = false
        var dumps: UInt64 = 0
        var total = c_lab_counts(instructions: 0, allocations: 0, allocator_instructions: 0, dispatch_instructions: 0)
        var failure: String? = nil
    }

    private static let base: String? = {
        guard c_lab_on_valgrind() != 0, let value = getenv(Self.outputVariable) else { return nil }
        let base = String(cString: value)
        return base.isEmpty ? nil : base
    }()

    private static let state = Mutex(State())

    /// Whether this process counts: it runs under callgrind, started by `lab run --counted`.
    @inlinable
    public static var isActive: Bool { Self.activeFlag }

    @usableFromInline
    static let activeFlag: Bool = Self.base != nil

    /// Switches callgrind's instrumentation on (from the run's first counted step) or off
    /// (once the last has run, so that reporting runs at Valgrind's uninstrumented speed).
    public static func instrument(_ on: Bool) {
        guard Self.isActive else { return }
        Self.state.withLock { state in
            c_lab_callgrind_instrument(on ? 1 : 0)
            state.instrumenting = on
        }
    }

    /// The counts so far, or nil when not counting: outside a counted run, outside the part
    /// of it that is instrumented (set-up, reporting), or after a dump could not be read
    /// (`failure` says why).
    public static func read() -> (instructions: UInt64, allocations: UInt64)? {
        guard let base = Self.base else { return nil }
        return Self.state.withLock { state in
            guard state.failure == nil, state.instrumenting else { return nil }
            state.dumps += 1
            let rc = c_lab_callgrind_read(base, state.dumps, &state.total)
            guard rc == 0 else {
                state.failure =
                    rc < 0
                    ? "callgrind's dump \(base).\(state.dumps) has no summary line"
                    : "callgrind's dump \(base).\(state.dumps) could not be read: \(String(cString: strerror(rc)))"
                return nil
            }
            return (
                state.total.instructions &- state.total.allocator_instructions &- state.total.dispatch_instructions,
                state.total.allocations
            )
        }
    }

    /// One callgrind dump's counts, as a reading adds them up: its instructions, its calls
    /// into the allocator, and the instructions spent inside the allocator. Nil if the file
    /// cannot be read or has no summary. (What the readings use, open to tests.)
    public static func parse(
        dump path: String
    ) -> (instructions: UInt64, allocations: UInt64, allocatorInstructions: UInt64, dispatchInstructions: UInt64)? {
        var counts = c_lab_counts(instructions: 0, allocations: 0, allocator_instructions: 0, dispatch_instructions: 0)
        guard c_lab_callgrind_parse(path, &counts) == 0 else { return nil }
        return (counts.instructions, counts.allocations, counts.allocator_instructions, counts.dispatch_instructions)
    }

    /// Why counting stopped, if it did.
    public static var failure: String? { Self.state.withLock { $0.failure } }
}
