// The hiccup meter behind `lab hiccups`: a thread that does nothing but read the clock and
// touch memory, noting every gap between two readings that its own work cannot explain, and
// what the guest saw of it. See CLabCounting.h and docs/performance.md, "Hiccups".
#define _GNU_SOURCE
#include "CLabCounting.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <time.h>

static uint64_t c_lab_hiccup_clock(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

// What the guest's kernel can tell about the thread: context switches of either kind, and
// the interrupts it took (UINT64_MAX where they cannot be counted).
typedef struct {
    uint64_t switches;
    uint64_t interrupts;
} c_lab_hiccup_seen;

static c_lab_hiccup_seen c_lab_hiccup_look(void) {
    c_lab_hiccup_seen seen = {0, UINT64_MAX};
    struct rusage usage;
    if (getrusage(RUSAGE_THREAD, &usage) == 0) {
        seen.switches = (uint64_t)usage.ru_nvcsw + (uint64_t)usage.ru_nivcsw;
    }
    uint64_t cpu = 0, involuntary = 0, interrupts = 0;
    if (c_lab_thread_usage(&cpu, &involuntary, &interrupts) == 0) seen.interrupts = interrupts;
    return seen;
}

static int c_lab_hiccup_bucket(uint64_t gap) {
    static const uint64_t upper[C_LAB_HICCUP_BUCKETS - 1] = {10000, 20000, 50000, 100000, 1000000};
    int bucket = 0;
    while (bucket < C_LAB_HICCUP_BUCKETS - 1 && gap >= upper[bucket]) bucket++;
    return bucket;
}

// Charges a gap to what the guest saw between two looks.
static void c_lab_hiccup_charge(
    c_lab_hiccups *result, const c_lab_hiccup_seen *before, const c_lab_hiccup_seen *after, uint64_t gap
) {
    int cause = C_LAB_HICCUP_UNSEEN;
    if (after->switches != before->switches) {
        cause = C_LAB_HICCUP_SWITCHED;
    } else if (after->interrupts != before->interrupts) {
        cause = C_LAB_HICCUP_INTERRUPTED;
    }
    result->gaps[cause][c_lab_hiccup_bucket(gap)]++;
    result->gap_nanoseconds[cause] += gap;
    if (gap > result->longest[cause]) result->longest[cause] = gap;
}

// Looks at what the guest saw (into *seen), first charging `gap` (none if under `floor`), the
// gap that ended at `before`, to it; returns the clock after the look.
//
// The look is the meter's only way into the kernel, and a preemption often waits for it: on
// kernels with lazy preemption (6.x, PREEMPT_DYNAMIC) the tick that ends a slice only asks for
// a switch, which the thread's next system call then grants, on its way out, after getrusage
// has read the count. Off a quiet core a sixth of the looks held a switch (2026-11-28). So
// the look is timed too: one that took `floor` or more held a gap of its own, charged by the
// next look, which then sees the switch; a few rounds at most.
static uint64_t c_lab_hiccup_settle(
    c_lab_hiccups *result, c_lab_hiccup_seen *seen, uint64_t gap, uint64_t before, uint64_t floor
) {
    for (int round = 0;; round++) {
        c_lab_hiccup_seen after = c_lab_hiccup_look();
        uint64_t now = c_lab_hiccup_clock();
        if (gap >= floor) c_lab_hiccup_charge(result, seen, &after, gap);
        *seen = after;
        gap = now - before;
        before = now;
        if (gap < floor || round == 7) return now;
    }
}

int c_lab_hiccups_measure(const c_lab_hiccup_options *options, c_lab_hiccups *result) {
    memset(result, 0, sizeof *result);
    if (options->seconds <= 0 || options->working_set_bytes < 64) return EINVAL;
    // The thread's own CPUs, given back at the end: the caller's thread may be a pool's.
    cpu_set_t own;
    if (sched_getaffinity(0, sizeof own, &own) != 0) return errno;
    size_t lines = options->working_set_bytes / 64;
    volatile uint8_t *memory = calloc(lines, 64);
    if (!memory) return ENOMEM;
    if (options->cpu >= 0) {
        int status = c_lab_pin_thread(options->cpu);
        if (status != 0) {
            free((void *)memory);
            return status;
        }
    }
    // Touch every line once, so page faults are not part of the measurement.
    for (size_t line = 0; line < lines; line++) memory[line * 64] = (uint8_t)line;

    const uint64_t floor = C_LAB_HICCUP_FLOOR;
    // The counters are read at least this often, so that a gap is charged only to what the
    // guest saw since shortly before it.
    const uint64_t look_every = 1000000;
    c_lab_hiccup_seen seen = c_lab_hiccup_look();
    result->interrupts_counted = seen.interrupts != UINT64_MAX;
    struct timespec cpu_start;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu_start);
    uint64_t start = c_lab_hiccup_clock();
    uint64_t end = start + (uint64_t)(options->seconds * 1e9);
    uint64_t last = start, looked = start, next_stall = start + options->test_stall_every_nanoseconds;
    uint64_t state = 0x9e3779b97f4a7c15u;
    for (;;) {
        // The thread's own work between two readings: a few lines of the working set.
        for (int touch = 0; touch < 4; touch++) {
            state = state * 6364136223846793005u + 1442695040888963407u;
            memory[((state >> 33) % lines) * 64] += 1;
        }
        uint64_t now = c_lab_hiccup_clock();
        result->readings++;
        if (options->test_stall_every_nanoseconds > 0 && now >= next_stall) {
            // Test only: a stall the guest cannot see, made by spinning without reading the clock
            // in between. What came before it is charged first, and the counters are read
            // just before it, so it is judged on its own.
            uint64_t spin_start = c_lab_hiccup_settle(result, &seen, now - last, now, floor);
            while (c_lab_hiccup_clock() - spin_start < options->test_stall_nanoseconds) {
            }
            last = spin_start;
            now = c_lab_hiccup_clock();
            next_stall = now + options->test_stall_every_nanoseconds;
            result->test_stalls++;
        }
        uint64_t gap = now - last;
        if (gap >= floor || now - looked >= look_every) {
            // The look's own few microseconds are not the thread's hiccup (unless it held one):
            // start again after it.
            now = c_lab_hiccup_settle(result, &seen, gap, now, floor);
            looked = now;
        }
        last = now;
        if (now >= end) break;
    }
    result->nanoseconds = last - start;
    struct timespec cpu_end;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu_end);
    result->cpu_nanoseconds = (uint64_t)(cpu_end.tv_sec - cpu_start.tv_sec) * 1000000000u
        + (uint64_t)cpu_end.tv_nsec - (uint64_t)cpu_start.tv_nsec;
    free((void *)memory);
    if (options->cpu >= 0) sched_setaffinity(0, sizeof own, &own);
    return 0;
}

int c_lab_pin_thread(int cpu) {
    if (cpu < 0 || cpu >= CPU_SETSIZE) return EINVAL;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof set, &set) == 0 ? 0 : errno;
}

int c_lab_allowed_cpus(int *cpus, int capacity) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return -1;
    int count = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (!CPU_ISSET(cpu, &set)) continue;
        if (count < capacity) cpus[count] = cpu;
        count++;
    }
    return count;
}

int c_lab_membarrier(int command) {
    return syscall(SYS_membarrier, command, 0, 0) == 0 ? 0 : errno;
}
