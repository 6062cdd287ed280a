import CLabCounting
import Foundation

/// The whole process's CPU time so far: every thread's, in user mode and in the kernel
/// (`getrusage(RUSAGE_SELF)`, microsecond resolution); and how long its threads waited,
/// runnable, for a core (the scheduler's run-queue delay, `/proc/self/task/*/schedstat`).
public struct ProcessCPU: Sendable, Equatable, Codable {
    /// CPU time in user mode, in nanoseconds.
    public var userNanoseconds: UInt64
    /// CPU time in the kernel (system calls, the network stack), in nanoseconds.
    public var systemNanoseconds: UInt64
    /// Time the process's threads spent runnable but waiting for a core, added up over its
    /// live threads (a thread that ended takes its share with it); nil where the kernel does
    /// not say (no `/proc`, or schedstats compiled out).
    public var waitingNanoseconds: UInt64?

    /// A reading.
    public init(userNanoseconds: UInt64, systemNanoseconds: UInt64, waitingNanoseconds: UInt64? = nil) {
        self.userNanoseconds = userNanoseconds
        self.systemNanoseconds = systemNanoseconds
        self.waitingNanoseconds = waitingNanoseconds
    }

    /// Both.
    public var totalNanoseconds: UInt64 { self.userNanoseconds &+ self.systemNanoseconds }

    /// Now; nil if the kernel refuses (never seen on Linux).
    public static func now() -> ProcessCPU? {
        var user: UInt64 = 0
        var system: UInt64 = 0
        guard c_lab_process_cpu(&user, &system) == 0 else { return nil }
        return ProcessCPU(userNanoseconds: user, systemNanoseconds: system, waitingNanoseconds: Self.runQueueDelay())
    }

    /// The run-queue delay of every live thread, in nanoseconds: the second field of each
    /// `/proc/self/task/<tid>/schedstat`.
    static func runQueueDelay() -> UInt64? {
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") else { return nil }
        var total: UInt64 = 0
        var read = false
        for task in tasks {
            guard let text = try? String(contentsOfFile: "/proc/self/task/\(task)/schedstat", encoding: .utf8) else {
                continue  // the thread ended meanwhile
            }
            let fields = text.split(separator: " ")
            guard fields.count >= 2, let delay = UInt64(fields[1]) else { continue }
            total &+= delay
            read = true
        }
        return read ? total : nil
    }

    /// What was used from `earlier` to this reading (0 where a counter went back: the
    /// run-queue delay does when threads end).
    public func since(_ earlier: ProcessCPU) -> ProcessCPU {
        func difference(_ now: UInt64, _ then: UInt64) -> UInt64 { now >= then ? now - then : 0 }
        return ProcessCPU(
            userNanoseconds: difference(self.userNanoseconds, earlier.userNanoseconds),
            systemNanoseconds: difference(self.systemNanoseconds, earlier.systemNanoseconds),
            waitingNanoseconds: self.waitingNanoseconds.flatMap { now in
                earlier.waitingNanoseconds.map { difference(now, $0) }
            }
        )
    }
}
