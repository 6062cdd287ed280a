import Foundation
import Histogram
import LabCore
import LabResults
import LabScenario

// What a run's recorders hold, made into its result: the per-round medians, the server's
// own steps (fetched with serverStats), and the RunResult the reports are written from.
extension Runner {
    /// Each round's medians, over every client's samples of that round.
    static func rounds(
        _ recorders: [ClientRecorder],
        samples: [Int: CalibrationSample],
        keys: [GroupKey]
    ) -> [RoundResult] {
        let count = recorders.map(\.roundSamples.count).max() ?? 0
        return (0..<count).compactMap { round in
            guard let calibration = samples[round] else { return nil }
            let groups = keys.indices.map { group in
                var pooled: [Step: [UInt64]] = [:]
                for recorder in recorders where round < recorder.roundSamples.count {
                    for (step, values) in recorder.roundSamples[round][group] { pooled[step, default: []] += values }
                }
                return RoundResult.Group(
                    key: keys[group],
                    steps: pooled.sorted { Step.reportOrdering($0.key, $1.key) }.map { step, values in
                        RoundResult.StepMedian(step: step.name, count: values.count, p50: CalibrationSample.median(values))
                    }
                )
            }
            return RoundResult(calibration: calibration, groups: groups)
        }
    }

    /// The server's own steps during the run, or why there are none.
    struct ServerSideResult {
        var groups: [GroupResult] = []
        var note: String? = nil
        var machine: MachineInfo? = nil
        var provider: ProviderInfo? = nil
        /// The server's CPU over the run, if it reports it.
        var cpu: RunCPU.Server? = nil
    }

    static func serverSide(
        _ remote: any TransportEndpoint,
        before: Result<ServerStats, LabError>,
        transport: String
    ) async -> ServerSideResult {
        do {
            let earlier = try before.get()
            let later = try await ServerSide.fetch(remote).get()
            return ServerSideResult(
                groups: try ServerSide.groups(before: earlier, after: later, transport: transport),
                note:
                    "measured by the server (\(later.provider.name) on \(later.machine.hostname)), fetched with serverStats before and after the run: the `server` groups",
                machine: later.machine,
                provider: later.provider,
                cpu: try ServerSide.cpu(before: earlier, after: later)
            )
        } catch let error as LabError {
            return ServerSideResult(note: "not reported: \(error.message)")
        } catch {
            return ServerSideResult(note: "not reported: \(error)")
        }
    }

    func result(
        built: [Built],
        recorders: [ClientRecorder],
        histograms: StepHistograms,
        startedAt: Date,
        total: UInt64,
        server: String,
        serverSide: ServerSideResult
    ) -> RunResult {
        let scenario = self.plan.scenario
        let mine = Self.clients(self.plan)
        let groups = self.groups(built: built, recorders: recorders, histograms: histograms, serverSide: serverSide)
        let firstStart = recorders.map(\.firstStart).min() ?? 0
        let lastEnd = recorders.map(\.lastEnd).max() ?? 0
        // The monotonic clock's start of the measured window, on the wall clock.
        let measuredFrom =
            firstStart == .max || firstStart == 0
            ? nil
            : Date(timeIntervalSinceNow: -Double(Stopwatch.now() &- firstStart) / 1e9)
        let load = scenario.load
        let loadText = Self.describe(load)
        #if DEBUG
        let build = "debug"
        #else
        let build = "release"
        #endif
        var result = RunResult(
            metadata: RunMetadata(
                scenario: scenario.name,
                description: scenario.description,
                scenarioFile: self.plan.file,
                startedAt: startedAt,
                build: build,
                machine: MachineInfo.current(),
                providers: Self.providers(built: built, serverSide: serverSide),
                transport: server,
                clients: mine.count,
                load: loadText,
                command: CommandLine.arguments.joined(separator: " "),
                serverSide: serverSide.note,
                serverMachine: serverSide.machine,
                shard: self.plan.shard?.description
            ),
            scenarioText: self.plan.text,
            groups: groups,
            measuredNanoseconds: lastEnd > firstStart ? lastEnd - firstStart : 0,
            totalNanoseconds: total,
            plannedIterations: load.model == .closed
                ? mine.count * load.iterations
                : Self.share(of: Self.openExchanges(load), population: scenario.clients.count, clients: mine)
                    - Self.share(of: Self.openWarmupExchanges(load), population: scenario.clients.count, clients: mine),
            completedIterations: recorders.reduce(0) { $0 + $1.measured },
            warmupIterations: recorders.reduce(0) { $0 + $1.warmup },
            stoppedByDeadline: recorders.contains { $0.stoppedByDeadline }
        )
        result.metadata.measuredFrom = measuredFrom
        if WorkCounter.isActive { result.metadata.counter = WorkCounter.counterName }
        result.metadata.interruptsCounted = ThreadUsage.countsInterrupts
        return self.plan.finish(result)
    }

    /// Each flow's group: its set-up steps, its measured steps from every stripe, and each
    /// client's counts; then the server's own groups, if it reported them.
    private func groups(
        built: [Built],
        recorders: [ClientRecorder],
        histograms: StepHistograms,
        serverSide: ServerSideResult
    ) -> [GroupResult] {
        var groups: [GroupResult] = built.map { item in
            var group = GroupResult(
                key: self.groupKey(item),
                flowKind: item.planned.kind,
                insecure: item.flow.isInsecure
            )
            for (step, sample) in item.setupSteps.samples {
                group.steps[step, default: StepHistograms.histogram()].record(sample.nanoseconds)
                group.details[step, default: StepDetail()].record(sample)
            }
            group.outcomes = item.setupSteps.outcomes
            group.setupTraffic = item.setupSteps.traffic
            group.parameters = Dictionary(
                item.planned.entry.cell.map { ($0.key, FlowEntry.text($0.value)) },
                uniquingKeysWith: { first, _ in first }
            )
            return group
        }
        for (index, steps) in histograms.merged().enumerated() where index < built.count {
            var measured = GroupResult(
                key: groups[index].key,
                flowKind: groups[index].flowKind,
                insecure: groups[index].insecure,
                steps: steps.times
            )
            measured.details = steps.details
            groups[index].merge(measured)
        }
        groups += serverSide.groups
        for recorder in recorders {
            for (index, measured) in recorder.groups.enumerated() {
                var counts = GroupResult(
                    key: groups[index].key,
                    flowKind: groups[index].flowKind,
                    insecure: groups[index].insecure,
                    errors: measured.errors,
                    iterations: measured.iterations,
                    outcomes: measured.outcomes
                )
                counts.errorMessages = measured.errorMessages
                counts.traffic = measured.traffic
                counts.setupTraffic = measured.setupTraffic
                counts.packets = measured.packets
                counts.setupPackets = measured.setupPackets
                groups[index].merge(counts)
            }
        }
        return groups
    }

    /// Every provider the run used, client's and server's, once each.
    private static func providers(built: [Built], serverSide: ServerSideResult) -> [ProviderInfo] {
        var providers: [ProviderInfo] = []
        for item in built {
            for provider in [item.planned.setup.clientProvider, item.planned.setup.serverProvider]
            where !providers.contains(where: { $0.name == provider.name }) {
                providers.append(ProviderInfo(name: provider.name, version: provider.version))
            }
        }
        if let provider = serverSide.provider, !providers.contains(provider) { providers.append(provider) }
        return providers
    }
}
