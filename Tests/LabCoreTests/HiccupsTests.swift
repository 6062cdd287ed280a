import CLabCounting
import Foundation
import LabCore
import LabTestSupport
import Synchronization
import Testing

/// The hiccup meter's arithmetic (`Hiccups`), on figures worked out by hand.
@Suite(.tier(.unit)) struct HiccupsArithmeticTests {
    /// 2 s measured; unseen gaps: 40 of 5–10 µs, 300 of 10–20, 100 of 20–50, 60 of 50–100.
    static let figures = Hiccups(
        threads: 2,
        nanoseconds: 2_000_000_000,
        cpuNanoseconds: 1_990_000_000,
        readings: 1_000,
        workingSetBytes: 65_536,
        interruptsCounted: true,
        tallies: [
            .unseen: Hiccups.Tally(counts: [40, 300, 100, 60, 0, 0], nanoseconds: 9_000_000, longest: 99_000),
            .switched: Hiccups.Tally(counts: [0, 0, 0, 0, 0, 4], nanoseconds: 12_000_000, longest: 3_500_000),
        ]
    )

    @Test("Rates count the gaps from a bucket's floor up, per second measured")
    func rates() {
        let figures = Self.figures
        #expect(figures.rate(.unseen, atLeast: 5_000) == 250)
        #expect(figures.rate(.unseen, atLeast: 10_000) == 230)
        #expect(figures.rate(.unseen, atLeast: 50_000) == 30)
        #expect(figures.rate(.switched, atLeast: 1_000_000) == 2)
        #expect(figures.rate(.interrupted, atLeast: 5_000) == 0, "no tally: none")
    }

    @Test("The step length from which a tail percentile is the host's: share ÷ rate")
    func tailLength() throws {
        let figures = Self.figures
        // 230 gaps of ≥ 10 µs a second: a 5 µs step catches one in 0.115% of its samples.
        #expect(abs(figures.unseenShare(stepNanoseconds: 5_000, atLeast: 10_000) - 0.00115) < 1e-12)
        // 0.1% of the samples from 0.001 / 230 s = 4.348 µs on (rounded up to the nanosecond).
        #expect(figures.unseenTailLength(share: 0.001, atLeast: 10_000) == 4_348)
        // 1%, gaps of ≥ 50 µs (30 a second): 333.334 µs.
        #expect(figures.unseenTailLength(share: 0.01, atLeast: 50_000) == 333_334)
        #expect(figures.unseenTailLength(share: 0.001, atLeast: 100_000) == nil, "none that long")
    }

    @Test("Threads add up: counts and time summed, the longest kept, interrupts counted only if by all")
    func adding() {
        var total = Self.figures
        var other = Self.figures
        other.interruptsCounted = false
        other.tallies[.unseen] = Hiccups.Tally(counts: [1, 2, 3, 4, 5, 6], nanoseconds: 1_000, longest: 2_000_000)
        total.add(other)
        #expect(total.threads == 4 && total.nanoseconds == 4_000_000_000 && total.readings == 2_000)
        #expect(
            total[.unseen]
                == Hiccups.Tally(counts: [41, 302, 103, 64, 5, 6], nanoseconds: 9_001_000, longest: 2_000_000)
        )
        #expect(total[.switched].counts == [0, 0, 0, 0, 0, 8])
        #expect(!total.interruptsCounted)
    }
}

/// The hiccup meter on this machine: gaps it is made to have are found, under the right
/// cause. The host adds gaps of its own, so the checks are lower bounds. Alone (tier
/// `hiccups`): another test's threads would switch the meter out inside its own stalls.
@Suite(.tier(.hiccups), .serialized) struct HiccupsMeterTests {
    @Test("A stall the guest cannot see is counted as unseen, in its size's bucket")
    func unseenStall() throws {
        let hiccups = try Hiccups.measure(
            seconds: 0.5,
            testStall: Hiccups.TestStall(every: 2_000_000, length: 60_000)
        )
        // About 0.5 s / 2.06 ms: up to some 240 stalls of 60 µs, fewer when the meter's CPU is
        // shared (a stall is timed from when the meter runs).
        try #require(hiccups.testStalls >= 20, "\(hiccups.testStalls) stalls made")
        let unseen = hiccups[.unseen].count(atLeast: 50_000)
        // A switch or an interrupt that lands inside a stall (on a loaded machine, many) has it
        // charged to it, one stall at most each; every other stall is an unseen gap of its size.
        let seen = hiccups[.switched].count(atLeast: 0) + hiccups[.interrupted].count(atLeast: 0)
        #expect(
            unseen + seen >= hiccups.testStalls,
            "\(unseen) unseen gaps of ≥ 50 µs for \(hiccups.testStalls) stalls, \(seen) gaps the guest saw: \(hiccups.tallies)"
        )
        #expect(hiccups.readings > 1_000 && hiccups.nanoseconds >= 500_000_000)
    }

    @Test("A thread that shares its CPU with another busy one has its switches counted as switches")
    func switches() throws {
        // Both on one CPU the process may use: the scheduler alternates them, in slices whose
        // length is the scheduler's own (a few milliseconds with one tick, under one with
        // another): the kernel's count of the meter's involuntary switches says how many
        // gaps there were, whatever their length.
        let cpu = try #require(Hiccups.allowedCPUs().first)
        let stop = Atomic<Bool>(false)
        let pinned = Atomic<Int32>(-1)
        let started = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            pinned.store(c_lab_pin_thread(Int32(cpu)), ordering: .relaxed)
            started.signal()
            var spins: UInt64 = 0
            while !stop.load(ordering: .relaxed) { spins &+= 1 }
        }
        started.wait()
        defer { stop.store(true, ordering: .relaxed) }
        try #require(pinned.load(ordering: .relaxed) == 0, "the busy thread could not be pinned to CPU \(cpu)")
        // The measurement runs on this thread: its involuntary switches around it are the meter's.
        let before = try #require(ThreadUsage.now())
        let hiccups = try Hiccups.measure(seconds: 0.5, cpu: cpu)
        let after = try #require(ThreadUsage.now())
        let switches = after.involuntarySwitches &- before.involuntarySwitches
        try #require(switches >= 5, "the scheduler switched the meter out \(switches) times in 0.5 s beside a busy thread")
        let switched = hiccups[.switched]
        // Each switch is a gap charged to a switch. The kernel often grants a preemption at the
        // meter's next system call, inside its look at the counters (lazy preemption), so the
        // look's own gaps count too (`c_lab_hiccup_settle`). Not counted: the pin's and the
        // unpin's switches, outside the loop but inside this test's readings, and two switches
        // inside one gap (10% of them allowed).
        #expect(
            switched.count(atLeast: 0) + 2 + switches / 10 >= switches,
            "\(switched.count(atLeast: 0)) switched gaps for \(switches) involuntary switches: \(hiccups.tallies)"
        )
        // The time the thread spent off its CPU (wall time less CPU time, both measured) is in
        // its gaps, nearly all charged to switches: the busy thread's share of the CPU.
        let offCPU = Double(hiccups.nanoseconds) - Double(hiccups.cpuNanoseconds)
        let gapTime = Hiccups.Cause.allCases.reduce(0.0) { $0 + Double(hiccups[$1].nanoseconds) }
        #expect(
            gapTime >= 0.9 * offCPU - 1e6,
            "gaps \(gapTime / 1e6) ms for \(offCPU / 1e6) ms off the CPU: \(hiccups.tallies)"
        )
        // The time the busy thread took is charged to switches, not to the host.
        #expect(switched.nanoseconds > 4 * hiccups[.unseen].nanoseconds, "\(hiccups.tallies)")
    }

    @Test(
        "Interrupts the thread takes are counted as interrupts, where they can be counted",
        .enabled(if: ThreadUsage.countsInterrupts, "interrupts are counted as root only")
    )
    func interrupts() throws {
        // The scheduler's tick interrupts the meter; so does membarrier's expedited barrier,
        // which sends an inter-processor interrupt to every CPU running a thread of this
        // process: to the meter's, every half millisecond.
        try #require(c_lab_membarrier(16) == 0)  // REGISTER_PRIVATE_EXPEDITED
        let stop = Atomic<Bool>(false)
        Thread.detachNewThread {
            while !stop.load(ordering: .relaxed) {
                _ = c_lab_membarrier(8)  // PRIVATE_EXPEDITED
                usleep(500)
            }
        }
        defer { stop.store(true, ordering: .relaxed) }
        let hiccups = try Hiccups.measure(seconds: 0.5, cpu: Hiccups.allowedCPUs().first)
        #expect(hiccups.interruptsCounted)
        #expect(hiccups[.interrupted].count(atLeast: 5_000) >= 1, "\(hiccups.tallies)")
    }
}
