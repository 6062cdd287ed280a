import LabCore

/// One reading of the process allocator's statistics (jemalloc's, refreshed with `epoch`).
public struct HeapSnapshot: Codable, Sendable, Equatable {
    /// `stats.allocated`: bytes in live allocations.
    public var allocated: UInt64
    /// `stats.active`: bytes in the pages those allocations occupy.
    public var active: UInt64
    /// `stats.resident`: bytes of the allocator's pages resident in memory.
    public var resident: UInt64
    /// Allocation requests so far, over all arenas (small + large `nrequests`); only grows.
    public var allocations: UInt64

    /// A reading given directly.
    public init(allocated: UInt64, active: UInt64, resident: UInt64, allocations: UInt64) {
        self.allocated = allocated
        self.active = active
        self.resident = resident
        self.allocations = allocations
    }

    /// Live bytes allocated since `earlier` (negative if more was freed), over `count` things
    /// (clients, connections, exchanges); nil when `count` is not positive.
    public func growth(since earlier: HeapSnapshot, per count: Int) -> Double? {
        guard count > 0 else { return nil }
        return (Double(self.allocated) - Double(earlier.allocated)) / Double(count)
    }

    /// Allocations made since `earlier`, over `count`; nil when `count` is not positive.
    public func allocations(since earlier: HeapSnapshot, per count: Int) -> Double? {
        guard count > 0 else { return nil }
        return Double(self.allocations &- earlier.allocations) / Double(count)
    }
}
