import Foundation
import LabCore
import LabScenario

/// How one client spreads its exchanges over time: one driver per load model, each run over
/// a `ClientSession` with the client's `WeightedPicker`.
protocol LoadDriver {
    /// Runs the client's exchanges, picking each one's flow with `picker`.
    func drive(_ session: inout ClientSession, picker: inout WeightedPicker) async throws
}

/// `closed`: the warm-up, then the measured iterations back to back, each starting when the
/// one before ends; with rounds, every client meets the others at each round's start.
struct ClosedLoad: LoadDriver {
    let warmup: Int
    let iterations: Int
    let rounds: Int
    let barrier: RoundBarrier?
    let deadline: UInt64
    /// Whether there are more clients than cores (then each yields after every iteration).
    let yieldsEveryIteration: Bool

    func drive(_ session: inout ClientSession, picker: inout WeightedPicker) async throws {
        var lastYield = Stopwatch.now()
        for iteration in 0..<(self.warmup + self.iterations) {
            if Stopwatch.now() >= self.deadline {
                session.stoppedByDeadline()
                await self.barrier?.leave()
                break
            }
            if let barrier = self.barrier, iteration >= self.warmup {
                // Measured iteration m belongs to round m × rounds / iterations.
                let round = (iteration - self.warmup) * self.rounds / self.iterations
                if round == session.rounds {
                    await withTaskCancellationHandler {
                        await barrier.arrive(at: round)
                    } onCancel: {
                        Task { await barrier.cancel() }
                    }
                    session.startRound()
                }
            }
            try await session.iterate(picker.next(), measured: iteration >= self.warmup, intended: nil)
            // An in-process iteration never suspends: yield so that all clients take turns
            // on the thread pool (and the progress display gets a turn) instead of the
            // first few running to completion before the others start. Clients that each
            // have a thread of their own yield every 10 ms only: a yield per iteration
            // measured as 3% of an x25519 exchange's time.
            if self.yieldsEveryIteration || Stopwatch.now() &- lastYield > 10_000_000 {
                await Task.yield()
                lastYield = Stopwatch.now()
            }
        }
    }
}

/// `closed` with `stages`: the client runs its iterations back to back through every stage
/// whose `clients` include it (client k runs in a stage of n clients when k < n), and waits
/// through the others; the warm-up runs at the first stage's clients. An iteration belongs to
/// the stage it started in.
struct StagedClosedLoad: LoadDriver {
    /// Each stage's span on the monotonic clock and its clients, the warm-up first if any.
    struct Span {
        var start: UInt64
        var end: UInt64
        var clients: Int
    }

    let client: Int
    let spans: [Span]
    let warmupEnd: UInt64
    let deadline: UInt64
    /// Whether there are more clients than cores (then each yields after every iteration).
    let yieldsEveryIteration: Bool

    func drive(_ session: inout ClientSession, picker: inout WeightedPicker) async throws {
        var lastYield = Stopwatch.now()
        for span in self.spans where self.client < span.clients {
            if span.start > Stopwatch.now() { try await Runner.sleep(until: min(span.start, self.deadline)) }
            while true {
                let now = Stopwatch.now()
                if now >= self.deadline {
                    session.stoppedByDeadline()
                    return
                }
                guard now < span.end else { break }
                try await session.iterate(picker.next(), measured: now >= self.warmupEnd, intended: nil)
                if self.yieldsEveryIteration || Stopwatch.now() &- lastYield > 10_000_000 {
                    await Task.yield()
                    lastYield = Stopwatch.now()
                }
            }
        }
    }

    /// The spans of `load`'s stages from `scheduleStart`: the warm-up at the first stage's
    /// clients, then each stage.
    static func spans(_ load: LoadSpec, from scheduleStart: UInt64) -> [Span] {
        var spans: [Span] = []
        var start = scheduleStart
        if load.warmup > .zero, let first = load.stages.first {
            spans.append(Span(start: start, end: start &+ load.warmup.nanoseconds, clients: first.clients))
            start &+= load.warmup.nanoseconds
        }
        for stage in load.stages {
            spans.append(Span(start: start, end: start &+ stage.duration.nanoseconds, clients: stage.clients))
            start &+= stage.duration.nanoseconds
        }
        return spans
    }
}

/// `open`: exchanges on a fixed schedule, whatever the answers' times: exchange j of the
/// run starts at `scheduleStart + j / rate` (with stages, at its stage's rate from the
/// stage's start: `OpenSchedule`), and client k of N takes j = k, k + N, k + 2N, …
/// An exchange is timed from when it should have started (coordinated omission is counted).
struct OpenLoad: LoadDriver {
    let client: Int
    let clients: Int
    let schedule: OpenSchedule
    let scheduleStart: UInt64
    let warmupEnd: UInt64
    let deadline: UInt64

    func drive(_ session: inout ClientSession, picker: inout WeightedPicker) async throws {
        var sequence = self.client
        let total = self.schedule.total
        while sequence < total {
            let intended = self.scheduleStart &+ self.schedule.offset(of: sequence)
            // A client that has fallen behind stops at the deadline too, backlog or not.
            if intended >= self.deadline || Stopwatch.now() >= self.deadline {
                session.stoppedByDeadline()
                break
            }
            if intended > Stopwatch.now() {
                try await Runner.sleep(until: intended)
            } else {
                // Behind schedule: no sleep, so yield to let the other clients take turns.
                await Task.yield()
            }
            try await session.iterate(picker.next(), measured: intended >= self.warmupEnd, intended: intended)
            sequence += self.clients
        }
    }
}

/// `idle`: every client connected and set up, holding its connections in silence for
/// `duration`.
struct IdleLoad: LoadDriver {
    let duration: UInt64
    let deadline: UInt64

    func drive(_ session: inout ClientSession, picker: inout WeightedPicker) async throws {
        let until = Stopwatch.now() &+ self.duration
        if until > self.deadline { session.stoppedByDeadline() }
        try await Runner.sleep(until: min(until, self.deadline))
    }
}
