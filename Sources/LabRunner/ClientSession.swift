import LabCore

/// One simulated client's side of a run: its flows' clients, its connections (one per flow
/// group), which groups are set up on the server, and what it recorded. A load driver calls
/// `iterate` for each exchange; `Runner` opens the session before and closes it after.
struct ClientSession: Sendable {
    /// Instructions and allocator calls so far (`WorkCounter.read()`).
    typealias Work = (instructions: UInt64, allocations: UInt64)

    let built: [Runner.Built]
    let progress: RunProgress
    let slowdown: StepSlowdown?
    /// Whether each step, and each exchange, reads the threads' usage (`report.stepUsage`).
    let readsUsage: Bool
    /// Whether connections read TCP's counters around each round trip (`report.packets`).
    let readsPackets: Bool
    /// The run's intervals, or nil when it keeps none.
    let intervals: IntervalClock?
    private(set) var recorder: ClientRecorder
    private var flowClients: [any FlowClient]
    private var connections: [(any Connection)?]
    private var prepared: [Bool]

    init(
        _ client: Runner.PreparedClient,
        built: [Runner.Built],
        progress: RunProgress,
        slowdown: StepSlowdown?,
        readsUsage: Bool,
        readsPackets: Bool = false,
        intervals: IntervalClock?
    ) {
        self.readsPackets = readsPackets
        self.built = built
        self.progress = progress
        self.slowdown = slowdown
        self.readsUsage = readsUsage
        self.intervals = intervals
        self.recorder = client.recorder
        self.flowClients = client.flowClients
        self.connections = Array(repeating: nil, count: built.count)
        self.prepared = Array(repeating: false, count: built.count)
    }

    /// Opens each group's connection and runs its `prepare`. A connection that cannot open
    /// now is retried by the group's first iteration, which then counts the failure if it
    /// persists; so is a `prepare` that fails.
    mutating func open() async throws {
        for (group, item) in self.built.enumerated() {
            var steps = IterationSteps(readsPackets: self.readsPackets)
            self.connections[group] = try? await item.endpoint.connect(recorder: &steps)
            self.recorder.record(group, steps)
            self.recorder.addTraffic(group, steps, measured: false)
            guard let connection = self.connections[group] else { continue }
            do {
                _ = try await self.prepare(group, over: connection)
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                // Not an iteration, so not counted; the server may have closed the connection
                // after its error answer, so the retry starts a fresh one.
                await connection.close()
                self.connections[group] = nil
            }
        }
    }

    /// Runs the group's `prepare` over `connection`: its steps and counts go to the group as
    /// set-up, never to an iteration (a failed one's counts alone). Returns how long it took.
    private mutating func prepare(_ group: Int, over connection: any Connection) async throws -> UInt64 {
        var steps = IterationSteps()
        let start = Stopwatch.now()
        do {
            try await self.flowClients[group].prepare(over: connection, recorder: &steps)
        } catch {
            self.recorder.count(group, steps)
            self.recorder.addTraffic(group, steps, measured: false)
            throw error
        }
        let elapsed = Stopwatch.now() &- start
        self.recorder.record(group, steps)
        self.recorder.addTraffic(group, steps, measured: false)
        self.prepared[group] = true
        return elapsed
    }

    /// One exchange of `group`: timed (and counted, in a counted run) from its start, or from
    /// `intended` in the open model, to its end, less any `prepare` retried in between.
    mutating func iterate(_ group: Int, measured: Bool, intended: UInt64?) async throws {
        var steps = IterationSteps(
            slowdown: self.slowdown,
            group: group,
            readsUsage: self.readsUsage,
            readsPackets: self.readsPackets
        )
        // The exchange moves between threads as it awaits: it is marked preempted when any
        // thread of the process was, and counted over the whole process.
        let switches = self.readsUsage ? ThreadUsage.processInvoluntarySwitches() : nil
        let counted = WorkCounter.isActive ? WorkCounter.read() : nil
        let start = Stopwatch.now()
        var failure: (kind: String, message: String)? = nil
        // A `prepare` retried here is set-up: its time is left out of the exchange.
        var setup: UInt64 = 0
        do {
            // After a failure the connection is gone: this iteration opens a new one, and
            // its `connect` is part of the exchange, as it would be for a real client.
            let connection: any Connection
            if let open = self.connections[group] {
                connection = open
            } else {
                connection = try await self.built[group].endpoint.connect(recorder: &steps)
                self.connections[group] = connection
            }
            // A client not yet set up on the server tries again; if that fails, so does
            // this iteration, with the error of `prepare`.
            if !self.prepared[group] { setup = try await self.prepare(group, over: connection) }
            try await self.flowClients[group].iterate(over: connection, recorder: &steps)
        } catch let error as any CodedError {
            failure = (error.codeName, error.message)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            failure = ("other", String(describing: error))
        }
        let end = Stopwatch.now()
        let countedAfter = counted == nil ? nil : WorkCounter.read()
        let switchesAfter = self.readsUsage ? ThreadUsage.processInvoluntarySwitches() : nil
        self.progress.finished(failed: failure != nil)
        if measured {
            self.record(
                group,
                steps,
                failure: failure,
                span: (intended: intended, start: start, end: end, setup: setup),
                preempted: switches.flatMap { before in switchesAfter.map { $0 != before } },
                counted: counted.flatMap { before in countedAfter.map { (before, $0) } }
            )
        } else {
            self.recorder.warmup += 1
        }
        if failure != nil, let connection = self.connections[group] {
            // The server closes a connection after an error answer: the next iteration
            // starts a fresh one.
            await connection.close()
            self.connections[group] = nil
        }
    }

    /// Records a measured iteration: its steps and its `exchange` (and, in the open model,
    /// its service time, from its real start), or its failure.
    private mutating func record(
        _ group: Int,
        _ steps: IterationSteps,
        failure: (kind: String, message: String)?,
        span: (intended: UInt64?, start: UInt64, end: UInt64, setup: UInt64),
        preempted: Bool?,
        counted: (before: Work, after: Work)?
    ) {
        self.recorder.measured += 1
        self.recorder.groups[group].iterations += 1
        self.recorder.firstStart = min(self.recorder.firstStart, span.start)
        self.recorder.lastEnd = max(self.recorder.lastEnd, span.end)
        // What a failed iteration sent went on the wire all the same.
        self.recorder.addTraffic(group, steps, measured: true)
        // The interval it started in (was due to, in the open model), where its latency counts from.
        let interval = self.intervals?.index(of: span.intended ?? span.start)
        if let failure {
            self.recorder.groups[group].errors[failure.kind, default: 0] += 1
            if self.recorder.groups[group].errorMessages[failure.kind] == nil {
                self.recorder.groups[group].errorMessages[failure.kind] = failure.message
            }
            if let interval {
                self.recorder.histograms.failed(stripe: self.recorder.stripe, group: group, interval: interval)
            }
            // A failed iteration's timings are dropped, but what it counted happened.
            self.recorder.count(group, steps)
            return
        }
        let exchange = Runner.elapsed(from: span.intended ?? span.start, to: span.end, excluding: span.setup)
        var sample = StepSample(nanoseconds: exchange, preempted: preempted ?? false, watched: preempted != nil)
        if let counted {
            sample.instructions = counted.after.instructions &- counted.before.instructions
            sample.allocations = counted.after.allocations &- counted.before.allocations
        }
        var extra = [(step: Step.exchange, sample: sample)]
        if self.readsUsage, let work = Self.work(steps) {
            // The exchange split: what its steps cost in CPU, and the rest of its time.
            extra.append((.work, StepSample(nanoseconds: work, watched: false)))
            extra.append((.waiting, StepSample(nanoseconds: exchange > work ? exchange - work : 0, watched: false)))
        }
        if span.intended != nil {
            sample.nanoseconds = Runner.elapsed(from: span.start, to: span.end, excluding: span.setup)
            extra.append((.exchangeService, sample))
        }
        self.recorder.record(
            group,
            steps,
            extra: extra,
            interval: interval.map { ($0, self.intervals?.index(of: span.end) ?? $0) }
        )
        self.recorder.keepForRound(group, steps, exchange: exchange)
    }

    /// The CPU time of the iteration's steps that have one (`Step.work`); nil when none has.
    static func work(_ steps: IterationSteps) -> UInt64? {
        var total: UInt64 = 0
        var any = false
        for entry in steps.entries {
            guard let cpu = entry.sample.cpuNanoseconds else { continue }
            total &+= cpu
            any = true
        }
        return any ? total : nil
    }

    /// Marks the client stopped by the deadline.
    mutating func stoppedByDeadline() {
        self.recorder.stoppedByDeadline = true
    }

    /// Starts the client's next round sample set (closed model with rounds).
    mutating func startRound() {
        self.recorder.roundSamples.append(Array(repeating: [:], count: self.built.count))
    }

    /// How many rounds the client has started.
    var rounds: Int { self.recorder.roundSamples.count }

    /// Closes every connection.
    mutating func close() async {
        for connection in self.connections { await connection?.close() }
    }
}
