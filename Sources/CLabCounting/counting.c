// Valgrind's client requests are a few instructions that do nothing outside Valgrind
// (valgrind/valgrind.h); under callgrind they dump or toggle its counters. The reading of a
// dump happens with collection off, so only the program's own work is ever counted.
#define _GNU_SOURCE
#include "CLabCounting.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdint.h>
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

// Each thread's CPU time and the interrupts it took, read together with one read(2) of a
// perf event group opened for the thread: the software task clock (the scheduler's own
// nanosecond account of the thread, as CLOCK_THREAD_CPUTIME_ID) and the kernel's
// tracepoints for the local timer (the scheduler's tick), device interrupts, softirqs and
// inter-processor interrupts. No PMU is needed. This kernel charges an interrupt's time to
// the thread it interrupted (no IRQ time accounting), so a step that took one ran longer
// than its own work, with no context switch to show it. The
// tracepoints need root (tracefs, perf_event_paranoid); without them the CPU time comes
// from the thread's CPU clock and interrupts are not counted.
static const char *const c_lab_interrupt_events[] = {
    "irq_vectors/local_timer_entry",
    "irq/irq_handler_entry",
    "irq/softirq_entry",
    "irq_vectors/call_function_entry",
    "irq_vectors/call_function_single_entry",
    "irq_vectors/reschedule_entry",
};
#define C_LAB_INTERRUPT_EVENTS (sizeof(c_lab_interrupt_events) / sizeof(c_lab_interrupt_events[0]))

// A tracepoint's id from tracefs, or -1.
static long c_lab_tracepoint_id(const char *event) {
    static const char *const roots[] = {"/sys/kernel/tracing/events", "/sys/kernel/debug/tracing/events"};
    for (size_t root = 0; root < 2; root++) {
        char path[256];
        snprintf(path, sizeof path, "%s/%s/id", roots[root], event);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        char text[32];
        ssize_t got = read(fd, text, sizeof text - 1);
        close(fd);
        if (got <= 0) continue;
        text[got] = 0;
        return strtol(text, NULL, 10);
    }
    return -1;
}

static long c_lab_interrupt_ids[C_LAB_INTERRUPT_EVENTS];
static pthread_once_t c_lab_usage_once = PTHREAD_ONCE_INIT;
static pthread_key_t c_lab_usage_key;

// A thread's events, closed when the thread exits: a count of descriptors, then each.
static void c_lab_close_usage_group(void *value) {
    int *fds = value;
    for (int index = 1; index <= fds[0]; index++) close(fds[index]);
    free(fds);
}

static void c_lab_usage_setup(void) {
    for (size_t index = 0; index < C_LAB_INTERRUPT_EVENTS; index++) {
        c_lab_interrupt_ids[index] = c_lab_tracepoint_id(c_lab_interrupt_events[index]);
    }
    pthread_key_create(&c_lab_usage_key, c_lab_close_usage_group);
}

static int c_lab_open_event(uint32_t type, uint64_t config, int leader) {
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = type;
    attr.config = config;
    attr.read_format = PERF_FORMAT_GROUP;
    // pid 0, cpu -1: this thread, on whichever CPU it runs.
    return (int)syscall(SYS_perf_event_open, &attr, 0, -1, leader, PERF_FLAG_FD_CLOEXEC);
}

// The thread's group (task clock first, then every interrupt tracepoint that opened), or -1
// if the task clock or every tracepoint was refused.
static int c_lab_open_usage_group(void) {
    pthread_once(&c_lab_usage_once, c_lab_usage_setup);
    int *fds = calloc(2 + C_LAB_INTERRUPT_EVENTS, sizeof(int));
    if (!fds) return -1;
    int leader = c_lab_open_event(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, -1);
    if (leader >= 0) fds[++fds[0]] = leader;
    for (size_t index = 0; leader >= 0 && index < C_LAB_INTERRUPT_EVENTS; index++) {
        if (c_lab_interrupt_ids[index] < 0) continue;
        int fd = c_lab_open_event(PERF_TYPE_TRACEPOINT, (uint64_t)c_lab_interrupt_ids[index], leader);
        if (fd >= 0) fds[++fds[0]] = fd;
    }
    if (fds[0] < 2 || pthread_setspecific(c_lab_usage_key, fds) != 0) {
        c_lab_close_usage_group(fds);
        return -1;
    }
    return leader;
}

// -2: not opened yet on this thread; -1: not available.
static __thread int c_lab_usage_group = -2;

int c_lab_thread_usage(uint64_t *cpu_nanoseconds, uint64_t *involuntary_switches, uint64_t *interrupts) {
    struct rusage usage;
    if (getrusage(RUSAGE_THREAD, &usage) != 0) return errno;
    *involuntary_switches = (uint64_t)usage.ru_nivcsw;
    if (c_lab_usage_group == -2) c_lab_usage_group = c_lab_open_usage_group();
    if (c_lab_usage_group >= 0) {
        // PERF_FORMAT_GROUP: the number of events, then each one's count, the leader's first.
        uint64_t values[2 + C_LAB_INTERRUPT_EVENTS];
        ssize_t got = read(c_lab_usage_group, values, sizeof values);
        if (got >= (ssize_t)(3 * sizeof(uint64_t)) && values[0] >= 2) {
            *cpu_nanoseconds = values[1];
            uint64_t total = 0;
            for (uint64_t index = 2; index <= values[0] && index <= 1 + C_LAB_INTERRUPT_EVENTS; index++) {
                total += values[index];
            }
            *interrupts = total;
            return 0;
        }
    }
    // getrusage's ru_utime and ru_stime advance by whole scheduler ticks (4 ms) on kernels
    // without precise tick accounting, this VM's among them: the thread's CPU clock instead.
    struct timespec cpu;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu) != 0) return errno;
    *cpu_nanoseconds = (uint64_t)cpu.tv_sec * 1000000000u + (uint64_t)cpu.tv_nsec;
    *interrupts = UINT64_MAX;
    return 0;
}

int c_lab_process_involuntary_switches(uint64_t *involuntary_switches) {
    struct rusage usage;
    if (getrusage(RUSAGE_SELF, &usage) != 0) return errno;
    *involuntary_switches = (uint64_t)usage.ru_nivcsw;
    return 0;
}

int c_lab_process_cpu(uint64_t *user_nanoseconds, uint64_t *system_nanoseconds) {
    struct rusage usage;
    if (getrusage(RUSAGE_SELF, &usage) != 0) return errno;
    *user_nanoseconds = (uint64_t)usage.ru_utime.tv_sec * 1000000000u + (uint64_t)usage.ru_utime.tv_usec * 1000u;
    *system_nanoseconds = (uint64_t)usage.ru_stime.tv_sec * 1000000000u + (uint64_t)usage.ru_stime.tv_usec * 1000u;
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
