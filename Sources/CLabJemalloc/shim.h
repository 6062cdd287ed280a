// jemalloc's statistics through `mallctl` (Debian's jemalloc is unprefixed: `mallctl`, not
// `je_mallctl`). The MIB names are strings built from macros, so they get `static inline
// c_lab_*` wrappers here.
#ifndef C_LAB_JEMALLOC_SHIM_H
#define C_LAB_JEMALLOC_SHIM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <stdio.h>
#include <jemalloc/jemalloc.h>

#define C_LAB_STRINGIFY_(x) #x
#define C_LAB_STRINGIFY(x) C_LAB_STRINGIFY_(x)

/// One refreshed reading of jemalloc's statistics.
typedef struct {
    /// `stats.allocated`: bytes in live allocations.
    size_t allocated;
    /// `stats.active`: bytes in active pages (a multiple of the page size).
    size_t active;
    /// `stats.resident`: bytes in physically resident data pages the allocator maps.
    size_t resident;
    /// `stats.arenas.<MALLCTL_ARENAS_ALL>.small.nrequests` + `….large.nrequests`: allocation
    /// requests so far, over all arenas, those a thread cache served included (cumulative).
    /// Not `nmalloc`: with thread caches on, that counts cache fills from the arena's bins, a
    /// few per hundred requests.
    uint64_t allocations;
} c_lab_heap_stats;

/// Refreshes the statistics (`epoch`), then reads them into `out`; 0 on success, else the
/// `mallctl` error of the first read that failed (e.g. ENOENT without --enable-stats).
static inline int c_lab_heap_stats_read(c_lab_heap_stats *out) {
    uint64_t epoch = 1;
    size_t length = sizeof(epoch);
    int rc = mallctl("epoch", &epoch, &length, &epoch, length);
    if (rc != 0) return rc;
    length = sizeof(size_t);
    if ((rc = mallctl("stats.allocated", &out->allocated, &length, NULL, 0)) != 0) return rc;
    length = sizeof(size_t);
    if ((rc = mallctl("stats.active", &out->active, &length, NULL, 0)) != 0) return rc;
    length = sizeof(size_t);
    if ((rc = mallctl("stats.resident", &out->resident, &length, NULL, 0)) != 0) return rc;
    uint64_t small = 0, large = 0;
    length = sizeof(uint64_t);
    rc = mallctl("stats.arenas." C_LAB_STRINGIFY(MALLCTL_ARENAS_ALL) ".small.nrequests", &small, &length, NULL, 0);
    if (rc != 0) return rc;
    length = sizeof(uint64_t);
    rc = mallctl("stats.arenas." C_LAB_STRINGIFY(MALLCTL_ARENAS_ALL) ".large.nrequests", &large, &length, NULL, 0);
    if (rc != 0) return rc;
    out->allocations = small + large;
    return 0;
}

/// `thread.allocated`: bytes ever allocated by the calling thread through jemalloc; 0 on
/// success. Other threads cannot move it, so it tells whether this thread's `malloc` is
/// jemalloc's.
static inline int c_lab_thread_allocated(uint64_t *out) {
    size_t length = sizeof(uint64_t);
    return mallctl("thread.allocated", out, &length, NULL, 0);
}

/// Sets how long freed dirty pages stay resident before they go back to the system, in
/// milliseconds (0: at once), for the arenas there are and those made later; 0 on success.
/// (`arena.<all>` is not writable: each initialized arena is set in turn; those not yet
/// initialized answer EFAULT and take the new default when they are.)
static inline int c_lab_set_dirty_decay(ssize_t milliseconds) {
    int rc = mallctl("arenas.dirty_decay_ms", NULL, NULL, &milliseconds, sizeof(milliseconds));
    if (rc != 0) return rc;
    unsigned arenas = 0;
    size_t length = sizeof(arenas);
    if ((rc = mallctl("arenas.narenas", &arenas, &length, NULL, 0)) != 0) return rc;
    for (unsigned index = 0; index < arenas; index++) {
        char name[64];
        snprintf(name, sizeof(name), "arena.%u.dirty_decay_ms", index);
        rc = mallctl(name, NULL, NULL, &milliseconds, sizeof(milliseconds));
        if (rc != 0 && rc != 14 /* EFAULT: not initialized */) return rc;
    }
    return 0;
}

/// jemalloc's version string, e.g. `5.3.0-0-g54eaed1…`.
static inline const char *c_lab_jemalloc_version(void) {
    const char *version = NULL;
    size_t length = sizeof(version);
    if (mallctl("version", &version, &length, NULL, 0) != 0) return NULL;
    return version;
}

#endif
