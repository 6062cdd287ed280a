import Foundation
import LabCore
public import LabResults
public import LabScenario

/// Runs a validated scenario: builds the server side of every flow, starts one task per
/// simulated client, drives the load model and collects the results.
public struct Runner: Sendable {
    /// What to run.
    public let plan: Plan
    /// Counts for a progress display.
    public let progress: RunProgress
    /// Test-only: the steps slowed on purpose (`Plan.slowdowns`); nil in every normal run.
    let slowdown: StepSlowdown?

    /// A runner for `plan`.
    public init(plan: Plan) {
        self.plan = plan
        let scenario = plan.scenario
        let mine = Self.clients(plan)
        // A closed load in stages runs by time: nothing is planned in iterations (0).
        let perClient = scenario.load.stages.isEmpty ? scenario.load.iterations + scenario.load.warmupIterations : 0
        let planned =
            scenario.load.model == .closed
            ? mine.count * perClient
            : Self.share(of: Self.openExchanges(scenario.load), population: scenario.clients.count, clients: mine)
        self.progress = RunProgress(planned: planned)
        self.slowdown = StepSlowdown(
            plan.slowdowns,
            groups: plan.flows.count,
            slowed: plan.slowedProvider.map { name in plan.flows.map { $0.setup.clientProvider.name == name } }
        )
    }

    static func openExchanges(_ load: LoadSpec) -> Int {
        load.schedule.total
    }

    /// The indices of the clients this run runs: all, or its shard's.
    static func clients(_ plan: Plan) -> ClientSlice {
        plan.shard?.clients(of: plan.scenario.clients.count) ?? .all(plan.scenario.clients.count)
    }

    /// How many of the open model's first `exchanges` exchanges fall to `clients`: exchange
    /// j goes to client j mod population.
    static func share(of exchanges: Int, population: Int, clients: ClientSlice) -> Int {
        guard population > 0, exchanges > 0 else { return 0 }
        let rounds = exchanges / population
        let rest = exchanges % population
        return rounds * clients.count + clients.count(below: rest)
    }

    struct Built: Sendable {
        let planned: PlannedFlow
        let flow: any Flow
        let endpoint: any TransportEndpoint
        let setupSteps: StepTimings
    }

    /// Runs the scenario. Throws only when the run itself cannot go on (exit code 3);
    /// failed iterations are counted in the result.
    public func run() async throws -> RunResult {
        let startedAt = Date()
        let server = try await self.reachServer()
        let memory = RunMemoryProbe()
        let (flows, histograms, prepared) = try await self.buildAndPrepare(
            server.transport,
            remote: server.remote,
            discovery: server.located.discovery,
            clients: server.clients,
            memory: memory
        )
        var serverText = server.located.description
        if server.remote == nil {
            let addresses = flows.compactMap(\.endpoint.address)
            if !addresses.isEmpty { serverText += " on " + addresses.joined(separator: ", ") }
        }
        let measured = try await self.runMeasured(
            server,
            flows: flows,
            histograms: histograms,
            prepared: prepared,
            memory: memory
        )
        var serverSide = ServerSideResult()
        if let remote = server.remote, let before = server.statsBefore {
            serverSide = await Self.serverSide(remote, before: before, transport: self.plan.scenario.server.transport)
        }
        var result = self.result(
            built: flows,
            recorders: measured.recorders,
            histograms: histograms,
            startedAt: startedAt,
            total: measured.nanoseconds,
            server: "\(self.plan.scenario.server.transport), server \(serverText)",
            serverSide: serverSide
        )
        result.metadata.clientsStartedAt = measured.clientsStartedAt
        result.intervals = measured.intervals
        result.stages = Self.stages(self.plan.scenario.load)
        if self.plan.scenario.flows.contains(where: { !$0.cell.isEmpty }) {
            result.matrixMetric = self.plan.scenario.report.matrixMetric
        }
        // A counted run's CPU is Valgrind's, tens of times the lab's own: no figure.
        if let cpu = measured.cpu, !WorkCounter.isActive {
            result.cpu = RunCPU(
                process: cpu,
                wallNanoseconds: measured.nanoseconds,
                cores: ProcessInfo.processInfo.activeProcessorCount,
                iterations: UInt64(measured.recorders.reduce(0) { $0 + $1.measured + $1.warmup }),
                includesServer: server.remote == nil,
                server: serverSide.cpu
            )
        }
        if let calibrator = measured.calibrator {
            result.calibration = Calibration(provider: calibrator.provider, samples: measured.calibrationSamples)
        }
        result.rounds = Self.rounds(
            measured.recorders,
            samples: measured.roundSamples,
            keys: flows.map { self.groupKey($0) }
        )
        result.memory = await memory.block(
            clients: server.clients.count,
            waited: self.plan.scenario.load.model == .idle,
            serverBefore: server.statsBefore
        )
        return result
    }

    /// The report group of a built flow.
    func groupKey(_ item: Built) -> GroupKey {
        GroupKey(
            flow: item.planned.label,
            suite: item.flow.suite,
            provider: item.planned.setup.providerLabel,
            transport: self.plan.scenario.server.transport
        )
    }

    /// The calibrator of this run: on the first of the plugins' calibration providers that
    /// loads (the lab's: OpenSSL), else on the first registered provider that does; nil (and
    /// no calibration) if none loads.
    func calibrator() -> Calibrator? {
        let registry = self.plan.plugins.providers
        for name in self.plan.plugins.calibrationProviders + registry.names {
            guard registry.names.contains(name), let provider = try? registry.make(name) else { continue }
            if let calibrator = try? Calibrator(provider) { return calibrator }
        }
        return nil
    }

    /// A client ready to run: its keys made before the clock starts, so that no exchange's
    /// time (and no open-model schedule) includes another client's key generation.
    ///
    /// Connections are opened later, when the client starts (spread by the ramp-up): `connect`
    /// is a measured step, and a herd of handshakes at once is not what it should measure.
    struct PreparedClient: Sendable {
        var recorder: ClientRecorder
        var flowClients: [any FlowClient]
    }

    static func prepareClient(
        built: [Built],
        histograms: StepHistograms,
        index: Int
    ) async throws -> PreparedClient {
        var prepared = PreparedClient(
            recorder: ClientRecorder(groups: built.count, histograms: histograms, client: index),
            flowClients: []
        )
        for (group, item) in built.enumerated() {
            var setup = IterationSteps()
            prepared.flowClients.append(try item.flow.makeClient(recorder: &setup))
            prepared.recorder.record(group, setup)
        }
        return prepared
    }

    /// `session`, opened (`ClientSession.open`) in a task of its own. A task keeps the high
    /// point of its async frames for as long as it lives (its allocator's slabs are reused,
    /// never freed): connecting and `prepare` go deep, and a client that then idles for the
    /// whole run held about 11 KiB of them (2,000 idle clients: 21.6 MiB of task slabs).
    static func opened(_ session: ClientSession) async throws -> ClientSession {
        let opening = Task {
            var session = session
            try await session.open()
            return session
        }
        return try await withTaskCancellationHandler { try await opening.value } onCancel: { opening.cancel() }
    }

    func runClient(
        _ index: Int,
        prepared: PreparedClient,
        built: [Built],
        barrier: RoundBarrier?,
        checkpoints: Checkpoints,
        runStart: UInt64,
        scheduleStart: UInt64,
        deadline: UInt64,
        intervals: IntervalClock?
    ) async throws -> ClientRecorder {
        let scenario = self.plan.scenario
        let clients = scenario.clients.count
        let offset = clients > 1 ? scenario.clients.rampUp.nanoseconds / UInt64(clients) * UInt64(index) : 0
        try await Self.sleep(until: min(runStart &+ offset, deadline))
        let first = index == Self.clients(self.plan).first
        if !first { await Self.wait(for: checkpoints.firstOpened) }
        var session = ClientSession(
            prepared,
            built: built,
            progress: self.progress,
            slowdown: self.slowdown,
            readsUsage: scenario.report.stepUsage,
            readsPackets: scenario.report.packets,
            intervals: intervals
        )
        session = try await Self.opened(session)
        if first { await Self.arrive(at: checkpoints.firstOpened, waiting: false) }
        // The idle model's clients wait here for the last one; the others are counted and go on.
        await Self.arrive(at: checkpoints.ready, waiting: scenario.load.model == .idle)
        var picker = WeightedPicker(weights: built.map(\.planned.entry.weight), runSeed: scenario.seed, client: index)
        let driver = self.driver(client: index, barrier: barrier, scheduleStart: scheduleStart, deadline: deadline)
        try await driver.drive(&session, picker: &picker)
        // The end of the measured phase, taken before any connection closes.
        await Self.arrive(at: checkpoints.end, waiting: true)
        await session.close()
        return session.recorder
    }

    /// The load driver of client `client` for the scenario's load model.
    private func driver(client: Int, barrier: RoundBarrier?, scheduleStart: UInt64, deadline: UInt64) -> any LoadDriver {
        let load = self.plan.scenario.load
        switch load.model {
        case .closed where !load.stages.isEmpty:
            return StagedClosedLoad(
                client: client,
                spans: StagedClosedLoad.spans(load, from: scheduleStart),
                warmupEnd: scheduleStart &+ load.warmup.nanoseconds,
                deadline: deadline,
                yieldsEveryIteration: Self.clients(self.plan).count > ProcessInfo.processInfo.activeProcessorCount
            )
        case .closed:
            return ClosedLoad(
                warmup: load.warmupIterations,
                iterations: load.iterations,
                rounds: load.rounds,
                barrier: barrier,
                deadline: deadline,
                yieldsEveryIteration: Self.clients(self.plan).count > ProcessInfo.processInfo.activeProcessorCount
            )
        case .open:
            return OpenLoad(
                client: client,
                clients: self.plan.scenario.clients.count,
                schedule: load.schedule,
                scheduleStart: scheduleStart,
                warmupEnd: scheduleStart &+ load.warmup.nanoseconds,
                deadline: deadline
            )
        case .idle:
            return IdleLoad(duration: load.duration.nanoseconds, deadline: deadline)
        }
    }

    /// The nanoseconds from `start` to `end`, less `excluded` (set-up done in between), never below 0.
    static func elapsed(from start: UInt64, to end: UInt64, excluding excluded: UInt64) -> UInt64 {
        let total = end &- start
        return total > excluded ? total - excluded : 0
    }

    static func sleep(until instant: UInt64) async throws {
        let now = Stopwatch.now()
        if instant > now { try await Task.sleep(nanoseconds: instant - now) }
    }

    /// `load` in words, as results and reports give it: `closed: 24 iterations per client
    /// after 4 warm-up`.
    public static func describe(_ load: LoadSpec) -> String {
        switch load.model {
        case .closed:
            "closed: \(load.iterations) iterations per client"
                + (load.warmupIterations > 0 ? " after \(load.warmupIterations) warm-up" : "")
        case .open where !load.stages.isEmpty:
            "open: stages "
                + load.stages.map { "\(TimeSpan.trimmed($0.rate))/s for \($0.duration)" }.joined(separator: ", ")
                + (load.warmup > .zero ? " after \(load.warmup) warm-up at the first rate" : "")
        case .open:
            "open: \(TimeSpan.trimmed(load.rate))/s"
                + (load.probed.map { probed in
                    " (\(TimeSpan.trimmed((load.capacityShare ?? 0) * 100))% of the \(Int(probed.carried.rounded()))/s "
                        + "\(probed.clients) client\(probed.clients == 1 ? "" : "s") carried back to back in a "
                        + "\(probed.duration) probe)"
                } ?? "")
                + " for \(load.duration)"
                + (load.warmup > .zero ? " (first \(load.warmup) warm-up)" : "")
        case .idle: "idle: every client connects, then all hold their connections for \(load.duration)"
        }
    }

    /// The stages of a load, from the end of its warm-up (the intervals' origin); a closed
    /// load's offered load is its clients.
    static func stages(_ load: LoadSpec) -> LoadStages? {
        guard load.model != .idle, !load.stages.isEmpty else { return nil }
        var start: UInt64 = 0
        let stages = load.stages.map { stage in
            defer { start += stage.duration.nanoseconds }
            return LoadStages.Stage(
                rate: load.model == .open ? stage.rate : Double(stage.clients),
                startNanoseconds: start,
                durationNanoseconds: stage.duration.nanoseconds
            )
        }
        var result = LoadStages(stages: stages, kneeP99Nanoseconds: load.kneeP99?.nanoseconds)
        result.offered = load.model == .open ? .rate : .clients
        return result
    }

    static func openWarmupExchanges(_ load: LoadSpec) -> Int {
        // Exchanges whose intended start falls inside the warm-up: j / rate < warmup.
        load.schedule.warmupExchanges
    }
}
