import LabCore

#if canImport(CLabJemalloc)
import CLabJemalloc
#endif

#if canImport(Glibc)
import Glibc
public import LabResults
#endif

/// The process allocator's statistics, read from jemalloc with `mallctl`.
///
/// The figures mean something only if jemalloc is the allocator the whole process uses: the
/// first call checks that a large `malloc` really moves `stats.allocated` (a program that links
/// jemalloc after the C library would still allocate with glibc, and jemalloc would count
/// nothing).
#if canImport(CLabJemalloc)
public enum HeapStats {
    /// A refreshed reading, or nil when jemalloc is not the process's allocator.
    public static func current() -> HeapSnapshot? {
        guard Self.isProcessAllocator else { return nil }
        return Self.read()
    }

    /// `jemalloc 5.3.0-0-g54eaed1…`, or nil without jemalloc's `version`.
    public static var allocator: String? {
        c_lab_jemalloc_version().map { "jemalloc " + String(cString: $0) }
    }

    /// Whether jemalloc counts this process's `malloc`s: a 4 MiB block must move this thread's
    /// `thread.allocated` by at least that much (a per-thread counter, so other threads
    /// allocating and freeing meanwhile cannot blur the check). Checked once.
    public static let isProcessAllocator: Bool = {
        let size = 4 << 20
        guard Self.read() != nil, let before = Self.threadAllocated else { return false }
        // jemalloc's own `mallocx`, not `malloc`: an optimising build removes a malloc/free
        // pair whose memory nothing reads, and then the check would see nothing allocated.
        guard let block = mallocx(size, 0) else { return false }
        memset(block, 1, 64)
        let during = Self.threadAllocated
        dallocx(block, 0)
        guard let during else { return false }
        return during >= before &+ UInt64(size)
    }()

    /// Bytes ever allocated through jemalloc by the calling thread (`thread.allocated`).
    public static var threadAllocated: UInt64? {
        var value: UInt64 = 0
        return c_lab_thread_allocated(&value) == 0 ? value : nil
    }

    /// Makes freed pages go back to the system after `milliseconds` (0: at once) instead of
    /// jemalloc's 10 s; whether it took. For a server whose memory bound must hold in its
    /// resident size: with the default, pages freed in the last 10 s stay resident, and a
    /// peer that makes the server build and drop large answers raises the resident size by
    /// that churn (+80 MiB in `HostileLoginLoadTests` with 40 fetch pipeliners).
    @discardableResult
    public static func returnFreedPages(after milliseconds: Int) -> Bool {
        Self.isProcessAllocator && c_lab_set_dirty_decay(milliseconds) == 0
    }

    /// jemalloc's figures after an `epoch` refresh, whether or not it is the process allocator.
    static func read() -> HeapSnapshot? {
        var stats = c_lab_heap_stats()
        guard c_lab_heap_stats_read(&stats) == 0 else { return nil }
        return HeapSnapshot(
            allocated: UInt64(stats.allocated),
            active: UInt64(stats.active),
            resident: UInt64(stats.resident),
            allocations: stats.allocations
        )
    }
}
#else
/// Built without jemalloc (`LAB_WITHOUT_JEMALLOC=1`, for AddressSanitizer, which must own
/// `malloc`): no allocator statistics; every reading is nil.
public enum HeapStats {
    /// Nil: this build has no jemalloc.
    public static func current() -> HeapSnapshot? { nil }
    /// Nil: this build has no jemalloc.
    public static var allocator: String? { nil }
    /// False: this build has no jemalloc.
    public static let isProcessAllocator = false
    /// Nil: this build has no jemalloc.
    public static var threadAllocated: UInt64? { nil }
    /// False: this build has no jemalloc.
    @discardableResult
    public static func returnFreedPages(after milliseconds: Int) -> Bool { false }
}
#endif
