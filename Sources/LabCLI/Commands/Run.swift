import ArgumentParser
import Foundation
import LabCore
import LabKit
import LabReport
import LabResults
import LabRunner
import LabScenario
import LabServer
import LabTransports

/// `lab run FILE`: runs a scenario and writes its reports.
struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a scenario and write report.html (open it first), results.csv, report.md and results.json.",
        discussion: """
            Exit codes: 0 all good; 1 bad input or usage; 2 a threshold was missed or the deadline \
            cut the run short; 3 the run itself failed; for a shard, 128 + the signal when SIGTERM or \
            SIGINT stopped it (143, 130).
            """
    )

    @Argument(help: "The scenario file (JSON).")
    var file: String

    @Option(name: .long, help: "Write the reports here instead of Reports/<scenario>/<UTC timestamp>/.")
    var out: String?

    @OptionGroup var replacing: ReplaceOption

    @Flag(name: .long, help: "Print nothing but errors.")
    var quiet = false

    @Option(
        help: ArgumentHelp(
            "Run only the K-th of N equal slices of the clients (K from 1 to N); `lab merge` combines the shards' results.json. The shard records how it ended in shard.json beside them.",
            valueName: "K/N"
        )
    )
    var shard: Shard?

    @Flag(
        name: .long,
        help: """
            Count, beside timing: run under Valgrind's callgrind, where every step also reports the \
            instructions it executed and the allocations it made, the same in every run of the same \
            build (for `lab check`'s counted gate). Each flow runs alone in a process of its own, with \
            its share of the load. Needs one client; about 50 times slower.
            """
    )
    var counted = false

    @Option(
        help: ArgumentHelp(
            "With --counted: shift each counted process's heap by N × 16 bytes, and its stack by 16 × (5N mod 256), before the run. `scripts/gate.sh record` records its baseline runs at layouts 0 to 15 so that each step's allowance covers what the placement of its buffers alone moves.",
            valueName: "N"
        )
    )
    var layout = 0

    @Option(
        help: ArgumentHelp(
            "The run's id, in results.json: give the shards of one run the same id (`lab merge` refuses shards of different runs). Default: a new one, or none for a shard.",
            valueName: "ID"
        )
    )
    var runId: String?

    @Option(
        name: .customLong("tag"),
        help: ArgumentHelp(
            "A label for results.json and report.md (repeatable), e.g. --tag branch=main.",
            valueName: "KEY=VALUE"
        )
    )
    var tags: [Tag] = []

    @Option(
        help: ArgumentHelp(
            "Hold the clients until this instant (ISO 8601, e.g. 2026-11-25T05:00:00Z, or seconds since 1970), after keys, connections and set-up: shards started with one --start-at begin together.",
            valueName: "TIME"
        )
    )
    var startAt: StartTime?

    @OptionGroup var changes: ScenarioChanges

    @Option(
        name: .customLong("format"),
        help: ArgumentHelp(
            "Also write this report (repeatable), beside the scenario's report.formats: \(LabCLI.catalog.reporters.names.joined(separator: ", ")).",
            valueName: "NAME"
        )
    )
    var formats: [String] = []

    @Option(help: ArgumentHelp(valueName: "STEP=PERCENT%", visibility: .hidden))
    var testSlowdown: [Slowdown] = []

    @Option(help: ArgumentHelp(valueName: "PROVIDER", visibility: .hidden))
    var testSlowdownProvider: String?

    @Flag(
        help:
            "Serve the run second by second while it runs: a page at http://HOST:PORT/ (server-sent events at /events, Prometheus text at /metrics), closed when the run ends."
    )
    var live = false

    @Option(help: "The live view's port (0 picks a free one, printed on stderr).")
    var livePort = 8765

    @Option(help: "The live view's address (127.0.0.1: this machine only).")
    var liveHost = "127.0.0.1"

    func validate() throws {
        if let start = self.startAt?.date {
            guard start.timeIntervalSinceNow < 24 * 3600 else {
                throw ValidationError("--start-at is more than 24 hours ahead: \(start)")
            }
            guard !self.counted else {
                throw ValidationError("--counted counts one process's work: it takes no --start-at")
            }
        }
        if let id = self.runId, id.isEmpty || id.count > 128 || id.contains(where: { $0.isWhitespace || $0.isNewline })
        {
            throw ValidationError("--run-id takes 1 to 128 characters without spaces, not '\(id)'")
        }
        let keys = self.tags.map(\.key)
        if let repeated = keys.first(where: { key in keys.filter { $0 == key }.count > 1 }) {
            throw ValidationError("--tag \(repeated)= is given twice")
        }
        guard self.layout == 0 || self.counted else {
            throw ValidationError("--layout shifts the heap and stack of a counted run's processes: it needs --counted")
        }
        guard !self.live || !self.counted else {
            throw ValidationError(
                "--live shows a run as it goes: a counted run (--counted) has nothing to show until it ends"
            )
        }
        guard (0...65_535).contains(self.livePort) else {
            throw ValidationError("--live-port takes 0 to 65535, not \(self.livePort)")
        }
        guard (0...4_096).contains(self.layout) else {
            throw ValidationError("--layout takes 0 to 4096, not \(self.layout)")
        }
        if self.counted {
            guard self.shard == nil else {
                throw ValidationError("--counted counts one client's work, alone: it takes no --shard")
            }
            guard WorkCounter.isActive || !WorkCounter.isUnderValgrind else {
                throw ValidationError("--counted starts Valgrind itself: run `lab run --counted` without valgrind")
            }
        }
    }

    func run() async throws {
        // A shard's shard.json, once its folder is accepted: how it ended, for `lab merge`.
        var recorder: ShardRecorder? = nil
        try await reportingErrors(failed: { recorder?.end(.failed, reason: $0, exitCode: $1) }) {
            let catalog = LabCLI.catalog
            let validated = try self.validatedPlan(catalog)
            // A process of a counted run, under callgrind: one flow, its results to the folder
            // the lab that started it reads them from.
            let alone = WorkCounter.isActive ? CountedRun.Child.current : nil
            if let alone { HeapShift.apply(alone.layout) }
            // The report folder is known before the run: the messaging service's database lives there.
            let directory =
                alone.map { URL(fileURLWithPath: $0.directory) }
                ?? self.out.map { URL(fileURLWithPath: $0) }
                ?? Self.defaultDirectory(for: validated.scenario, at: Date()).appendingPathComponent(
                    self.shard.map { "shard-\($0.index)-of-\($0.count)" } ?? "",
                    isDirectory: true
                )
            var plan = try validated.with(
                RunOptions(
                    dataDirectory: directory.path,
                    shard: self.shard,
                    startAt: self.startAt?.date,
                    formats: self.formats,
                    slowdowns: Dictionary(
                        self.testSlowdown.flatMap { slowdown in
                            // `work=P%`: every step of an exchange's work (cx/1's), as a slower provider would.
                            (slowdown.step == .work ? Slowdown.workSteps : [slowdown.step]).map {
                                ($0, slowdown.fraction)
                            }
                        },
                        uniquingKeysWith: { _, last in last }
                    ),
                    slowedProvider: self.testSlowdownProvider,
                    provenance: RunProvenance(
                        runId: self.runId,
                        tags: Dictionary(self.tags.map { ($0.key, $0.value) }, uniquingKeysWith: { _, last in last }),
                        lab: LabInfo.current
                    )
                )
            )
            if let alone { plan = plan.countedAlone(flow: alone.flow) }
            // Before any work: a folder the reports cannot go to, or that holds another run, is refused now.
            let folder = alone == nil ? try OutputFolder(directory, command: "run", replace: self.replacing.replace) : nil
            if let shard = self.shard, let folder {
                recorder = try ShardRecorder(shard: shard.description, runId: self.runId, folder: folder)
                recorder?.stopOnSignals()
            }
            let (result, live) = try await self.measure(plan)
            if alone != nil {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                try result.jsonData().write(to: directory.appendingPathComponent("results.json"))
                return
            }
            // The live page says the run has ended, and where, once its reports are there.
            let written: [URL]
            do {
                written = try catalog.writeReports(result, of: plan, to: directory)
                try folder?.record(written)
            } catch {
                await live?.finish(reports: nil)
                throw error
            }
            await live?.finish(reports: directory.relativePath)
            recorder?.end(.finished, reason: nil, exitCode: result.passed ? 0 : 2)
            if !self.quiet { Self.printSummary(result, plan: plan, written: written, in: directory) }
            if !result.passed {
                Self.printMisses(result, plan: plan)
                throw ExitCode(2)
            }
        }
    }

    /// The scenario's plan, with the options that need it checked against it.
    private func validatedPlan(_ catalog: PluginCatalog) throws -> Plan {
        let plan = try catalog.plan(file: self.file, overrides: self.changes.overrides)
        let clients = plan.scenario.clients.count
        if let shard = self.shard, shard.count > clients {
            throw ValidationError("--shard \(shard): \(clients) clients cannot make \(shard.count) slices")
        }
        guard !self.counted || clients == 1 else {
            throw ValidationError(
                "--counted counts one client's work, alone: clients.count must be 1 (the scenario has \(clients))"
            )
        }
        if plan.scenario.load.capacityShare != nil, self.shard != nil || self.counted {
            throw ValidationError(
                "\(self.counted ? "--counted" : "--shard") needs a rate per second: \"% of capacity\" is found by "
                    + "one process's probe, and each \(self.counted ? "counted flow" : "shard") would find its own"
            )
        }
        // Every name is checked before the run: an unknown one must not cost a run's time.
        for name in self.formats { _ = try catalog.reporters.make(name) }
        return plan
    }

    /// Runs `plan` here, or, for `--counted`, each flow under callgrind in a process of its own;
    /// with `--live`, the live view, to be finished once the reports are written.
    private func measure(_ plan: Plan) async throws -> (RunResult, LiveView?) {
        guard self.counted && !WorkCounter.isActive else { return try await self.runHere(plan) }
        let parts: [RunResult]
        do {
            parts = try CountedRun.run(
                scenario: self.file,
                slowdowns: self.testSlowdown.map(\.argument),
                flows: plan.flows.count,
                layout: self.layout
            )
        } catch let failed as CountedRun.ChildFailed {
            throw ExitCode(failed.code)
        }
        var result = try CountedFlows.combine(parts, command: CommandLine.arguments.joined(separator: " "))
        result.metadata.heapLayout = self.layout == 0 ? nil : self.layout
        if plan.flows.count > 1 {
            result.metadata.load =
                Runner.describe(plan.scenario.load)
                + "; each flow counted alone, in a process of its own, with its share by weight"
        }
        return (plan.finish(result), nil)
    }

    private static func printSummary(_ result: RunResult, plan: Plan, written: [URL], in directory: URL) {
        print(Summary.text(result))
        if let shard = plan.shard, !plan.thresholds.isEmpty {
            print("Shard \(shard): the thresholds are judged on the merge (lab merge), not on one slice.")
        }
        let names = written.map(\.lastPathComponent).filter { !$0.hasSuffix(".svg") }
        let charts = written.count - names.count
        print(
            "Reports in \(directory.relativePath)/: \(names.joined(separator: ", "))\(charts > 0 ? " and \(charts) charts" : "")"
        )
    }

    private static func printMisses(_ result: RunResult, plan: Plan) {
        var standardError = StandardError()
        for outcome in result.thresholds where !outcome.passed {
            print(
                "threshold missed: \(outcome.metric) \(outcome.condition) (observed \(outcome.observed))",
                to: &standardError
            )
        }
        if result.stoppedByDeadline {
            print("the run hit its deadline (\(plan.scenario.load.deadline)) and stopped early", to: &standardError)
        }
    }

    /// Runs `plan` in this process; with `--live`, served as it goes, and the live view
    /// returned still open (it says the reports are being written) for the caller to finish.
    private func runHere(_ plan: Plan) async throws -> (RunResult, LiveView?) {
        let plan = try await self.probingCapacity(plan)
        let runner = Runner(plan: plan)
        var live: LiveView? = nil
        if self.live {
            live = try await LiveView.start(
                host: self.liveHost,
                port: self.livePort,
                scenario: plan.scenario.name,
                description: plan.scenario.description,
                progress: runner.progress
            )
            if let live {
                FileHandleOutput.standardError("live view: http://\(live.endpoint.address)/\n")
            }
        }
        // A counted run shows no progress: the display's task would run, and be counted,
        // in the middle of the steps.
        let display =
            self.quiet || self.counted ? nil : ProgressDisplay(progress: runner.progress, scenario: plan.scenario)
        let watcher = display.map { display in Task { await display.watch() } }
        let result: RunResult
        do {
            result = try await runner.run()
        } catch {
            watcher?.cancel()
            await live?.finish(reports: nil)
            throw error
        }
        live?.measured()
        watcher?.cancel()
        _ = await watcher?.value
        display?.finish()
        return (result, live)
    }

    /// `plan` with an open rate given as a share of capacity found (`CapacityProbe`), saying
    /// what the probe found.
    private func probingCapacity(_ plan: Plan) async throws -> Plan {
        guard let share = plan.scenario.load.capacityShare else { return plan }
        if !self.quiet {
            FileHandleOutput.standardError(
                "capacity probe: \(plan.scenario.clients.count) clients back to back for \(CapacityProbe.duration) "
                    + "(after \(CapacityProbe.warmup) warm-up)…\n"
            )
        }
        let resolved = try await CapacityProbe.resolve(plan)
        if !self.quiet, let probed = resolved.scenario.load.probed {
            FileHandleOutput.standardError(
                "capacity probe: \(Int(probed.carried.rounded()))/s carried; the run offers "
                    + "\(TimeSpan.trimmed(share * 100))% of it, \(TimeSpan.trimmed(resolved.scenario.load.rate))/s\n"
            )
        }
        return resolved
    }

    static func defaultDirectory(for scenario: Scenario, at date: Date) -> URL {
        Self.defaultDirectory(named: scenario.name, at: date)
    }

    /// `Reports/<name>/<UTC timestamp>`.
    static func defaultDirectory(named name: String, at date: Date) -> URL {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        let stamp = String(
            format: "%04d-%02d-%02dT%02d%02d%02dZ",
            parts.year!,
            parts.month!,
            parts.day!,
            parts.hour!,
            parts.minute!,
            parts.second!
        )
        return URL(fileURLWithPath: "Reports").appendingPathComponent(name).appendingPathComponent(stamp)
    }
}
