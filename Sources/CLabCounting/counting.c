// Valgrind's client requests are a few instructions that do nothing outside Valgrind
// (valgrind/valgrind.h); under callgrind they dump or toggle its counters. The reading of a
// dump happens with collection off, so only the program's own work is ever counted.
#define _GNU_SOURCE
#include "CLabCounting.h"

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <valgrind/callgrind.h>

int c_lab_on_valgrind(void) { return RUNNING_ON_VALGRIND ? 1 : 0; }

void c_lab_callgrind_instrument(int on) {
    if (on) {
        CALLGRIND_START_INSTRUMENTATION;
    } else {
        CALLGRIND_STOP_INSTRUMENTATION;
    }
}

// A function name as callgrind writes it, without the `'N` it adds to a recursion level.
static size_t c_lab_name_length(const char *name) {
    const char *quote = strchr(name, '\'');
    return quote == NULL ? strlen(name) : (size_t)(quote - name);
}

static int c_lab_is_named(const char *name, const char *const *names, size_t count) {
    size_t length = c_lab_name_length(name);
    for (size_t i = 0; i < count; i++) {
        if (strlen(names[i]) == length && strncmp(name, names[i], length) == 0) return 1;
    }
    return 0;
}

// The allocator's entry points that allocate: what `allocations` counts.
static int c_lab_is_allocator(const char *name) {
    static const char *const names[] = {
        "malloc", "calloc", "realloc", "aligned_alloc", "posix_memalign",
        "memalign", "valloc", "mallocx", "rallocx",
    };
    return c_lab_is_named(name, names, sizeof(names) / sizeof(names[0]));
}

// Every function of the allocator a call can enter: its cost is `allocator_instructions`.
static int c_lab_is_allocator_work(const char *name) {
    static const char *const names[] = {
        "malloc", "calloc", "realloc", "aligned_alloc", "posix_memalign", "memalign", "valloc",
        "pvalloc", "free", "cfree", "mallocx", "rallocx", "dallocx", "sdallocx", "__libc_malloc",
        "__libc_calloc", "__libc_realloc", "__libc_free", "__libc_memalign", "_int_malloc",
        "_int_free", "_int_realloc", "_int_memalign", "malloc_consolidate", "tcache_init",
        "sysmalloc", "malloc_trim", "malloc_usable_size", "xallocx", "nallocx", "sallocx",
    };
    return c_lab_is_named(name, names, sizeof(names) / sizeof(names[0]));
}

// libdispatch's internals: the work of its own threads (the manager's timers), not the
// program's.
static int c_lab_is_dispatch(const char *name) { return strncmp(name, "_dispatch_", 10) == 0; }

// Callgrind's format (valgrind.org/docs/manual/cl-format.html), written with
// `--compress-strings=no --dump-instr=no`: the header's `summary: <Ir>`; `fn=<function>`
// opens a function's costs; each call edge is a `cfn=<callee>` line, then
// `calls=<count> <target>`, then the call's cost line `<line> <inclusive Ir>`.
static int c_lab_parse_dump(FILE *file, c_lab_counts *interval) {
    char line[4096];
    int summary = 0, allocator_edge = 0, allocator_work_edge = 0, in_allocator = 0, call_cost = 0;
    int in_dispatch = 0, dispatch_edge = 0, dispatch_call_cost = 0, after_calls = 0;
    while (fgets(line, sizeof line, file) != NULL) {
        size_t length = strlen(line);
        int partial = length > 0 && line[length - 1] != '\n';
        if (length > 0 && line[length - 1] == '\n') line[--length] = '\0';
        int cost_line = (line[0] >= '0' && line[0] <= '9') || line[0] == '+' || line[0] == '-' || line[0] == '*';
        char *cost = cost_line ? strchr(line, ' ') : NULL;
        uint64_t amount = cost != NULL ? strtoull(cost + 1, NULL, 10) : 0;
        if (after_calls) {
            // A call's cost line (inclusive), never a function's own cost: counted when it is
            // a call into the allocator from outside it, or one libdispatch made to a function
            // neither its own nor the allocator's.
            if (call_cost) interval->allocator_instructions += amount;
            if (dispatch_call_cost) interval->dispatch_instructions += amount;
            call_cost = 0;
            dispatch_call_cost = 0;
            after_calls = 0;
        } else if (strncmp(line, "summary:", 8) == 0) {
            interval->instructions = strtoull(line + 8, NULL, 10);
            summary = 1;
        } else if (strncmp(line, "fn=", 3) == 0) {
            in_allocator = c_lab_is_allocator_work(line + 3);
            in_dispatch = c_lab_is_dispatch(line + 3);
        } else if (strncmp(line, "cfn=", 4) == 0) {
            allocator_edge = c_lab_is_allocator(line + 4);
            allocator_work_edge = !in_allocator && c_lab_is_allocator_work(line + 4);
            dispatch_edge = in_dispatch && !c_lab_is_dispatch(line + 4) && !c_lab_is_allocator_work(line + 4);
        } else if (strncmp(line, "calls=", 6) == 0) {
            if (allocator_edge) interval->allocations += strtoull(line + 6, NULL, 10);
            call_cost = allocator_work_edge;
            dispatch_call_cost = dispatch_edge;
            after_calls = 1;
            allocator_edge = 0;
            allocator_work_edge = 0;
            dispatch_edge = 0;
        } else if (cost_line && in_dispatch) {
            // A libdispatch function's own instructions.
            interval->dispatch_instructions += amount;
        }
        // A line longer than the buffer (a long C++ name): skip its rest.
        while (partial && fgets(line, sizeof line, file) != NULL) {
            length = strlen(line);
            partial = length > 0 && line[length - 1] != '\n';
        }
    }
    return summary ? 0 : -1;
}

int c_lab_callgrind_parse(const char *path, c_lab_counts *interval) {
    FILE *file = fopen(path, "r");
    if (file == NULL) return errno;
    *interval = (c_lab_counts){0, 0, 0, 0};
    int rc = c_lab_parse_dump(file, interval);
    fclose(file);
    return rc;
}

int c_lab_callgrind_read(const char *base, uint64_t dump, c_lab_counts *total) {
    CALLGRIND_DUMP_STATS;
    CALLGRIND_TOGGLE_COLLECT;
    char path[4096];
    snprintf(path, sizeof path, "%s.%llu", base, (unsigned long long)dump);
    c_lab_counts interval;
    int rc = c_lab_callgrind_parse(path, &interval);
    unlink(path);
    if (rc == 0) {
        total->instructions += interval.instructions;
        total->allocations += interval.allocations;
        total->allocator_instructions += interval.allocator_instructions;
        total->dispatch_instructions += interval.dispatch_instructions;
    }
    CALLGRIND_TOGGLE_COLLECT;
    return rc;
}

// The CPU time from the thread's CPU clock (the scheduler's own nanosecond account):
// getrusage's ru_utime and ru_stime advance by whole scheduler ticks (4 ms) on kernels
// without precise tick accounting, this VM's among them.
int c_lab_thread_usage(uint64_t *cpu_nanoseconds, uint64_t *involuntary_switches) {
    struct rusage usage;
    if (getrusage(RUSAGE_THREAD, &usage) != 0) return errno;
    struct timespec cpu;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu) != 0) return errno;
    *cpu_nanoseconds = (uint64_t)cpu.tv_sec * 1000000000u + (uint64_t)cpu.tv_nsec;
    *involuntary_switches = (uint64_t)usage.ru_nivcsw;
    return 0;
}

int c_lab_process_involuntary_switches(uint64_t *involuntary_switches) {
    struct rusage usage;
    if (getrusage(RUSAGE_SELF, &usage) != 0) return errno;
    *involuntary_switches = (uint64_t)usage.ru_nivcsw;
    return 0;
}

// Valgrind 3.19 crashes ("the 'impossible' happened", SEGV_ACCERR) on every Swift program
// with an async `main`: libdispatch's `_dispatch_sig_thread` passes `sigsuspend` a mask in
// read-only memory, and Valgrind writes to the mask it is given. Defined here, in the
// executable, this `sigsuspend` comes before the C library's for every library of the
// process: under Valgrind it hands the kernel a copy of the mask on the stack; outside it,
// the C library's own.
int sigsuspend(const sigset_t *mask) {
    if (RUNNING_ON_VALGRIND) {
        sigset_t copy = *mask;
        return (int)syscall(SYS_rt_sigsuspend, &copy, (size_t)(_NSIG / 8));
    }
    static int (*libc_sigsuspend)(const sigset_t *) = NULL;
    if (libc_sigsuspend == NULL) libc_sigsuspend = (int (*)(const sigset_t *))dlsym(RTLD_NEXT, "sigsuspend");
    return libc_sigsuspend(mask);
}
