// Deterministic work counts for `lab run --counted`, and each thread's CPU time and
// involuntary context switches for every run. See counting.c.
#ifndef C_LAB_COUNTING_H
#define C_LAB_COUNTING_H

#include <stdint.h>

/// Whether the process runs under Valgrind (`RUNNING_ON_VALGRIND`): 0 outside it, where
/// every client request below is a no-op of a few instructions.
int c_lab_on_valgrind(void);

/// Callgrind: starts (1) or stops (0) instrumenting; a no-op outside Valgrind.
void c_lab_callgrind_instrument(int on);

/// What callgrind counted from the process's start of instrumentation to now.
typedef struct {
    /// Guest instructions executed (callgrind's `Ir`), every thread included.
    uint64_t instructions;
    /// Calls into the allocator's entry points (`malloc`, `calloc`, `realloc`,
    /// `aligned_alloc`, `posix_memalign`, `memalign`, `valloc`, `mallocx`, `rallocx`).
    uint64_t allocations;
    /// The instructions of `instructions` spent inside the allocator: the inclusive cost of
    /// every call into it (`malloc`, `free` and the rest, `c_lab_is_allocator_work`) from
    /// outside it. What the allocator does depends on the heap's whole history, not on the
    /// work asked of it (docs/performance.md, "Counted steps and the regression gate").
    uint64_t allocator_instructions;
    /// The instructions of `instructions` spent in libdispatch's internals (`_dispatch_*`
    /// functions, and what they call outside the allocator): its manager thread's timers
    /// fire by the clock, on a thread of their own, and callgrind sums every thread into a
    /// dump, so their work landed in whichever step was running (1,426 instructions a time).
    uint64_t dispatch_instructions;
} c_lab_counts;

/// Reads callgrind's counters: dumps its counts since the last dump
/// (`CALLGRIND_DUMP_STATS`), which callgrind writes to `<base>.<dump>`, then, with
/// collection switched off so that none of this reading is counted, adds the dump's totals
/// to `*total`, deletes the file and switches collection back on. `dump` is the 1-based
/// number of this dump in the process. 0 on success, else an errno value (the file could
/// not be read) or -1 (it has no `summary:` line).
int c_lab_callgrind_read(const char *base, uint64_t dump, c_lab_counts *total);

/// Reads one callgrind dump at `path` (written with `--compress-strings=no
/// --dump-instr=no`) into `*interval`: what `c_lab_callgrind_read` adds up. 0 on success,
/// else an errno value or -1 (no `summary:` line).
int c_lab_callgrind_parse(const char *path, c_lab_counts *interval);

/// The calling thread's CPU time in nanoseconds, its involuntary context switches so far
/// (`getrusage(RUSAGE_THREAD)`) and the interrupts it took so far, or `UINT64_MAX` where
/// they cannot be counted (see counting.c); 0 on success.
int c_lab_thread_usage(uint64_t *cpu_nanoseconds, uint64_t *involuntary_switches, uint64_t *interrupts);

/// The whole process's involuntary context switches so far (`getrusage(RUSAGE_SELF)`);
/// 0 on success.
int c_lab_process_involuntary_switches(uint64_t *involuntary_switches);

/// The whole process's CPU time so far, in user mode and in the kernel, in nanoseconds
/// (`getrusage(RUSAGE_SELF)`: every thread's, ended ones included); 0 on success.
int c_lab_process_cpu(uint64_t *user_nanoseconds, uint64_t *system_nanoseconds);

/// The hiccup meter (`lab hiccups`): gaps of at least this many nanoseconds between two
/// readings of the clock are counted.
#define C_LAB_HICCUP_FLOOR 5000
/// Gap sizes: [5, 10), [10, 20), [20, 50), [50, 100), [100, 1000) µs and 1 ms or more.
#define C_LAB_HICCUP_BUCKETS 6
/// What the guest saw of a gap: a context switch of the thread, an interrupt it took
/// (where interrupts are counted), or neither: the host took the virtual CPU, or the
/// hardware stalled, without the guest's kernel knowing.
#define C_LAB_HICCUP_SWITCHED 0
#define C_LAB_HICCUP_INTERRUPTED 1
#define C_LAB_HICCUP_UNSEEN 2

typedef struct {
    /// How long to measure, in seconds (above 0).
    double seconds;
    /// The CPU to pin the calling thread to while it measures (its own CPUs are given back
    /// after), or -1 to leave it where the scheduler puts it.
    int cpu;
    /// Bytes of memory the loop reads and writes at random between two readings of the
    /// clock, 64 or more.
    uint64_t working_set_bytes;
    /// Tests only: every this many nanoseconds (0: never), spin `test_stall_nanoseconds`
    /// without reading the clock, a stall of the thread's own that the guest cannot see.
    uint64_t test_stall_every_nanoseconds;
    uint64_t test_stall_nanoseconds;
} c_lab_hiccup_options;

typedef struct {
    /// Wall time measured and the thread's CPU time over it, in nanoseconds.
    uint64_t nanoseconds;
    uint64_t cpu_nanoseconds;
    /// Readings of the clock.
    uint64_t readings;
    /// Gaps by what the guest saw (C_LAB_HICCUP_SWITCHED …) and size bucket.
    uint64_t gaps[3][C_LAB_HICCUP_BUCKETS];
    /// Sum and longest of the gaps by what the guest saw, in nanoseconds.
    uint64_t gap_nanoseconds[3];
    uint64_t longest[3];
    /// Whether interrupts were counted (else every interrupt's gap is unseen).
    int interrupts_counted;
    /// Stalls made on purpose (`test_stall_every_nanoseconds`).
    uint64_t test_stalls;
} c_lab_hiccups;

/// Runs the hiccup meter on the calling thread for `options->seconds`: reads the clock in
/// a loop, touching `working_set_bytes` of memory between readings, and sorts every gap of
/// C_LAB_HICCUP_FLOOR or more by what the guest saw over it: the thread's context switches
/// (getrusage) and interrupts (as `c_lab_thread_usage`), read right after each gap and at
/// least once a millisecond. 0 on success, else an errno value.
int c_lab_hiccups_measure(const c_lab_hiccup_options *options, c_lab_hiccups *result);

/// Pins the calling thread to CPU `cpu`; 0 on success, else an errno value.
int c_lab_pin_thread(int cpu);

/// The CPUs the calling thread may run on (its affinity: a container's cpuset may give it
/// CPUs 2 and 3, not 0 and 1), in ascending order: up to `capacity` of them written to
/// `cpus`; returns how many there are, or -1 with errno set.
int c_lab_allowed_cpus(int *cpus, int capacity);

/// Tests only: membarrier(2) with `command` (MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 16,
/// then MEMBARRIER_CMD_PRIVATE_EXPEDITED, 8, which interrupts every CPU running a thread
/// of this process); 0 on success, else an errno value.
int c_lab_membarrier(int command);

#endif
