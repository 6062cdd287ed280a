import Foundation
import LabCore
import LabResults
import LabScenario

/// The phases of `Runner.run` that hold state of their own: reaching the server, building the
/// flows and preparing the clients, and running the clients.
extension Runner {
    /// The server a run's clients reach, and this process's share of the clients.
    struct ReachedServer {
        let transport: any Transport
        let located: (endpoint: (any TransportEndpoint)?, discovery: StepTimings, description: String)
        /// This process's clients.
        let clients: ClientSlice
        /// The server's totals before the run (a server elsewhere that answers `serverStats`).
        let statsBefore: Result<ServerStats, LabError>?

        /// A server elsewhere, or nil when this process serves.
        var remote: (any TransportEndpoint)? { self.located.endpoint }
    }

    /// Makes the transport, finds the server (or leaves it to the flows to start one), checks
    /// that this process has clients and files enough for them, and reaches a server
    /// elsewhere once, so that a run against one that cannot be reached fails at once, with
    /// the reason.
    func reachServer() async throws -> ReachedServer {
        let scenario = self.plan.scenario
        let transport = try self.plan.plugins.transports.make(scenario.server.transport, options: self.plan.transportOptions)
        let located = try await self.locateServer(transport)
        let mine = Self.clients(self.plan)
        guard !mine.isEmpty else {
            throw LabError(
                .invalidScenario,
                "Shard \(self.plan.shard.map(String.init(describing:)) ?? "-") of \(scenario.clients.count) clients has no client; use fewer shards"
            )
        }
        try OpenFileLimit.require(Self.openFilesNeeded(self.plan, clients: mine.count, remote: located.endpoint != nil))
        var statsBefore: Result<ServerStats, LabError>? = nil
        if let remote = located.endpoint {
            // The statistics first: the server counts its open connections in them, and would
            // count a probe's until it had taken its close on, at a moment of its own. A server
            // that answered them is reached; otherwise a probe fails with the reason, or
            // reaches a server that does not answer them.
            if scenario.server.serverStats { statsBefore = await ServerSide.fetch(remote) }
            if (try? statsBefore?.get()) == nil {
                var probe = NoStepRecorder()
                try await remote.connect(recorder: &probe).close()
            }
        }
        return ReachedServer(transport: transport, located: located, clients: mine, statsBefore: statsBefore)
    }

    /// What the measured phase gave: every client's recorder, how long it took, and the
    /// calibration samples taken around it and between its rounds.
    struct MeasuredPhase {
        let recorders: [ClientRecorder]
        /// The run over time; nil when it keeps no intervals.
        let intervals: RunIntervals?
        /// When the clients began, on the wall clock.
        let clientsStartedAt: Date
        let nanoseconds: UInt64
        /// The process's CPU time over `nanoseconds`.
        let cpu: ProcessCPU?
        let calibrator: Calibrator?
        let first: CalibrationSample?
        let last: CalibrationSample?
        let roundSamples: [Int: CalibrationSample]

        /// The first sample, those between rounds in round order, then the last.
        var calibrationSamples: [CalibrationSample] {
            let inner = self.roundSamples.sorted { $0.key < $1.key }.map(\.value)
            return [self.first].compactMap { $0 } + inner + [self.last].compactMap { $0 }
        }
    }

    /// Waits until the plan's `startAt` (`lab run --start-at`), if it is still ahead, and
    /// returns that instant on the monotonic clock: the run starts there, not when this
    /// process woke up (a millisecond or so later), so that every shard given one instant has
    /// one schedule and one interval grid. The hold is said on stderr (`lab run: ready; holding
    /// …`); a start already past is too, and the clients begin at once (nil).
    func holdUntilStart() async throws -> UInt64? {
        guard let startAt = self.plan.startAt else { return nil }
        let ahead = startAt.timeIntervalSinceNow
        guard ahead > 0 else {
            Self.say("--start-at was \(TimeSpan.trimmed(-ahead)) s ago when the clients were ready; starting now")
            return nil
        }
        let due = Stopwatch.now() &+ UInt64((ahead * 1e9).rounded())
        // When a shard was ready, in its log: how far ahead of the start it got there.
        Self.say("ready; holding the clients \(TimeSpan.trimmed((ahead * 10).rounded() / 10)) s until --start-at")
        try await Runner.sleep(until: due)
        return due
    }

    /// `lab run: LINE` on stderr, whatever `--quiet` says: what a shard's log must show.
    private static func say(_ line: String) {
        FileHandle.standardError.write(Data("lab run: \(line)\n".utf8))
    }

    /// Runs every client of this process, with a calibration sample before and after (and
    /// between rounds), counted under callgrind in a counted run; the servers this process
    /// started are shut down at its end.
    func runMeasured(
        _ server: ReachedServer,
        flows: [Built],
        histograms: StepHistograms,
        prepared: [PreparedClient],
        memory: RunMemoryProbe
    ) async throws -> MeasuredPhase {
        let scenario = self.plan.scenario
        let calibrator = self.calibrator()
        // A discarded sample first: the first one in a process ran ×1.2–1.3 slow in three of six
        // runs here (caches, page faults, lazily set-up state), the second one never.
        _ = try? calibrator?.sample(signs: 3, verifies: 8, encryptions: 8)
        let firstSample = try? calibrator?.sample()
        let barrier =
            scenario.load.model == .closed && scenario.load.rounds > 1
            ? RoundBarrier(parties: server.clients.count, calibrate: { try? calibrator?.sample() }) : nil
        // A counted run counts from the clients' first iteration to their last: set-up (per-run
        // keys: one sample each, an RSA key's prime search most of a run's instructions) and
        // reporting run at Valgrind's uninstrumented speed, several times faster.
        let due = try await self.holdUntilStart()
        WorkCounter.instrument(true)
        self.slowdown?.prepareCounting()
        let runStart = due ?? Stopwatch.now()
        let clientsStartedAt = Date()
        let stats = scenario.server.serverStats ? server.remote : nil
        // The server's connections with every client's open: those it had before (that
        // answer's own among them, as the next answer's will be) and one per client per flow.
        let connections = (try? server.statsBefore?.get())?.openConnections.map {
            $0 + server.clients.count * flows.count
        }
        let cpuStart = ProcessCPU.now()
        let (recorders, intervals) = try await self.runClients(
            server.clients,
            prepared: prepared,
            histograms: histograms,
            built: flows,
            barrier: barrier,
            checkpoints: self.checkpoints(
                clients: server.clients.count,
                memory: memory,
                remote: stats,
                remoteConnections: connections
            ),
            runStart: runStart
        )
        let runEnd = Stopwatch.now()
        let cpu = ProcessCPU.now().flatMap { end in cpuStart.map { end.since($0) } }
        WorkCounter.instrument(false)
        if let failure = WorkCounter.failure {
            for item in flows { await item.endpoint.shutdown() }
            throw LabError(.unsupported, "Counting failed: \(failure)")
        }
        let lastSample = try? calibrator?.sample()
        for item in flows { await item.endpoint.shutdown() }
        if let unslowed = self.slowdown?.unslowed, !unslowed.isEmpty {
            throw LabError(
                .unsupported,
                "--test-slowdown: \(unslowed.map(\.name).joined(separator: ", ")) never slowed: only steps timed "
                    + "in this process with StepRecorder.measure can be, after \(StepSlowdown.calibrationSamples) "
                    + "measurements of each"
            )
        }
        return MeasuredPhase(
            recorders: recorders,
            intervals: intervals,
            clientsStartedAt: clientsStartedAt,
            nanoseconds: runEnd &- runStart,
            cpu: cpu,
            calibrator: calibrator,
            first: firstSample,
            last: lastSample,
            roundSamples: await barrier?.samples ?? [:]
        )
    }

    /// Where the clients find the server: nil for servers this process starts; otherwise an
    /// endpoint given by address or found once by DNS-SD (timed as `discover`, a set-up step
    /// of every flow). With the server's description for the report.
    func locateServer(
        _ transport: any Transport
    ) async throws -> (endpoint: (any TransportEndpoint)?, discovery: StepTimings, description: String) {
        let server = self.plan.scenario.server
        var discovery = StepTimings()
        if let address = server.address {
            return (try await transport.remote(host: address.host, port: address.port), discovery, "at \(address)")
        }
        guard let service = server.discover else { return (nil, discovery, "in this process") }
        guard let discoverer = self.plan.plugins.discovery else {
            throw LabError(.unsupported, "This build of the lab has no DNS-SD discovery")
        }
        let start = Stopwatch.now()
        let found = try await discoverer.find(service: service, instance: server.instance, timeout: server.discoveryTimeout)
        discovery.record(.discover, nanoseconds: Stopwatch.now() &- start)
        return (
            try await transport.remote(host: found.host, port: found.port),
            discovery,
            "'\(found.instance)' found by DNS-SD (\(service)) at \(found.host):\(found.port)"
        )
    }

    /// Every flow made, each with the endpoint its clients reach (a server started here unless
    /// `remote`), and every client of this process prepared, in parallel. Servers already
    /// listening are shut down when anything fails: they must not outlive a run that could not
    /// start.
    func buildAndPrepare(
        _ transport: any Transport,
        remote: (any TransportEndpoint)?,
        discovery: StepTimings,
        clients mine: ClientSlice,
        memory: RunMemoryProbe
    ) async throws -> (built: [Built], histograms: StepHistograms, prepared: [PreparedClient]) {
        var built: [Built] = []
        do {
            for planned in self.plan.flows {
                var setup = StepTimings()
                for (step, sample) in discovery.samples { setup.record(step, sample: sample) }
                let flow = try planned.build(recorder: &setup, dataDirectory: self.plan.dataDirectory)
                let endpoint: any TransportEndpoint
                if let remote {
                    endpoint = remote
                } else if let handler = flow.handler {
                    endpoint = try await transport.serve(handler)
                } else {
                    throw LabError(.unsupported, "The flow '\(planned.label)' has no server side to serve")
                }
                built.append(Built(planned: planned, flow: flow, endpoint: endpoint, setupSteps: setup))
            }
            let flows = built
            let histograms = self.histograms(for: flows)
            memory.beforeClients()
            var prepared: [PreparedClient?] = Array(repeating: nil, count: mine.count)
            try await withThrowingTaskGroup(of: (Int, PreparedClient).self) { group in
                for slot in 0..<mine.count {
                    group.addTask {
                        (slot, try await Self.prepareClient(built: flows, histograms: histograms, index: mine[slot]))
                    }
                }
                for try await (slot, client) in group { prepared[slot] = client }
            }
            return (flows, histograms, prepared.map { $0! })
        } catch {
            for item in built { await item.endpoint.shutdown() }
            throw error
        }
    }

    /// Runs every client of this process to its end, from `runStart`, and collects the
    /// run's intervals meanwhile (`IntervalCollector`); the servers are shut down if one fails.
    func runClients(
        _ mine: ClientSlice,
        prepared: [PreparedClient],
        histograms: StepHistograms,
        built flows: [Built],
        barrier: RoundBarrier?,
        checkpoints: Checkpoints,
        runStart: UInt64
    ) async throws -> (recorders: [ClientRecorder], intervals: RunIntervals?) {
        let load = self.plan.scenario.load
        let deadline = runStart &+ load.deadline.nanoseconds
        let scheduleStart = runStart &+ self.plan.scenario.clients.rampUp.nanoseconds
        let timed = load.model == .open || !load.stages.isEmpty
        let measuredStart = scheduleStart &+ (timed ? load.warmup.nanoseconds : 0)
        for item in flows { item.flow.measuredPhaseStarts(at: measuredStart) }
        // Interval 0 starts with the first measured sample: in the open model the first due
        // after the warm-up; in the closed model the first client's start, since each client
        // measures from the end of its own warm-up, the first ones well inside the ramp-up.
        let intervalOrigin = timed ? measuredStart : runStart
        let collector = self.intervalCollector(origin: intervalOrigin, histograms: histograms, flows: flows)
        let ticker = collector.map { collector in Task { await collector.tick() } }
        do {
            let recorders = try await withThrowingTaskGroup(of: ClientRecorder.self) { group in
                for (slot, index) in mine.enumerated() {
                    group.addTask {
                        try await self.runClient(
                            index,
                            prepared: prepared[slot],
                            built: flows,
                            barrier: barrier,
                            checkpoints: checkpoints,
                            runStart: runStart,
                            scheduleStart: scheduleStart,
                            deadline: deadline,
                            intervals: collector?.clock
                        )
                    }
                }
                var recorders: [ClientRecorder] = []
                recorders.reserveCapacity(mine.count)
                for try await recorder in group { recorders.append(recorder) }
                return recorders
            }
            ticker?.cancel()
            await ticker?.value
            return (recorders, try collector?.finish())
        } catch {
            ticker?.cancel()
            for item in flows { await item.endpoint.shutdown() }
            throw error
        }
    }

    /// The run's step histograms, each group's measured steps made ahead (not in a counted
    /// run: there nothing is timed, and what the steps count must not move).
    private func histograms(for flows: [Built]) -> StepHistograms {
        guard !WorkCounter.isActive else { return StepHistograms(groups: flows.count) }
        let scenario = self.plan.scenario
        let usage = scenario.report.stepUsage
        let service: [Step] = scenario.load.model == .open ? [.exchangeService] : []
        let steps = flows.map { item in item.planned.steps + service + (usage ? [.work, .waiting] : []) }
        // CPU times: the flows' own steps, timed by `measure` on their threads.
        let cpu = usage ? Set(flows.flatMap(\.planned.steps)).subtracting([.exchange]) : []
        return StepHistograms(steps: steps, cpu: cpu, intervals: scenario.report.interval.nanoseconds > 0)
    }

    /// The collector of the run's intervals from `origin`, or nil when the run keeps none:
    /// `report.interval` is 0, or the run is counted (a ticker's allocations at moments the
    /// machine decides would move the counts of the steps after them).
    private func intervalCollector(origin: UInt64, histograms: StepHistograms, flows: [Built]) -> IntervalCollector? {
        let width = self.plan.scenario.report.interval.nanoseconds
        guard width > 0, !WorkCounter.isActive else { return nil }
        return IntervalCollector(
            clock: IntervalClock(origin: origin, width: width),
            histograms: histograms,
            keys: flows.map { self.groupKey($0) },
            progress: self.progress
        )
    }
}
