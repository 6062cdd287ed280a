public import Foundation
public import LabCore
public import LabResults
public import LabScenario

/// A flow entry ready to build: its label, type and checked options.
public struct PlannedFlow: Sendable {
    /// Index in `"flows"`.
    public package(set) var index: Int
    /// The entry as written.
    public package(set) var entry: FlowEntry
    /// The label reports and thresholds use.
    public package(set) var label: String
    /// The flow plugin's name.
    public package(set) var kind: String
    /// The steps the flow records.
    public package(set) var steps: [Step]
    /// The outcomes the flow counts, nil when it does not say (`Flow.outcomes`).
    public package(set) var outcomes: [String]? = nil
    /// The plugins and settings it is built from: what `build` hands the flow, so a change
    /// here (a test's provider) is the one the run uses.
    public package(set) var setup: FlowSetup
    /// Builds the flow from a set-up, with its checked options, recording set-up steps.
    let make: @Sendable (FlowSetup, inout StepTimings) throws -> any Flow

    /// Builds the flow (its server side) from `setup`, with the run's data folder, recording
    /// set-up steps.
    func build(recorder: inout StepTimings, dataDirectory: String?) throws -> any Flow {
        var setup = self.setup
        setup.dataDirectory = dataDirectory
        return try self.make(setup, &recorder)
    }
}

/// A scenario that passed every check, with its plugins resolved: what `Runner` runs.
///
/// Built once: validation makes it from the scenario (`ScenarioValidator`), and `with(_:)`
/// adds a run's options (`RunOptions`); code outside the lab's package reads it and cannot
/// change it.
public struct Plan: Sendable {
    /// The scenario.
    public package(set) var scenario: Scenario
    /// The file's text.
    public package(set) var text: String
    /// The file's path, if it came from one.
    public package(set) var file: String?
    /// The flows, in file order.
    public package(set) var flows: [PlannedFlow]
    /// The parsed thresholds, sorted by metric.
    public package(set) var thresholds: [Threshold]
    /// The loaded providers.
    public package(set) var providers: [any CryptoProvider]
    /// The plugins.
    public package(set) var plugins: Plugins
    /// The transport's settings, with the TLS files' paths resolved.
    public package(set) var transportOptions: TransportOptions
    /// Where the run keeps its files, e.g. the messaging service's default database (`lab
    /// run` sets the report folder); nil: a fresh temporary folder.
    public package(set) var dataDirectory: String?
    /// The slice of the client population to run (`lab run --shard K/N`); nil: every client.
    public package(set) var shard: Shard?
    /// When the clients begin, on the wall clock (`lab run --start-at`): the run makes its keys,
    /// connects and prepares, then holds until then, so that shards on several machines start
    /// together. Nil: at once.
    public package(set) var startAt: Date?
    /// Test-only: steps made slower by real work inside their timed region, as a fraction of
    /// their own time (0.25 = 25% slower; see `StepSlowdown`), so comparisons and checks can
    /// be shown to find a real slowdown. Empty in every normal run.
    public package(set) var slowdowns: [Step: Double] = [:]
    /// Test-only: the client provider whose groups alone are slowed (`--test-slowdown-provider`);
    /// nil: every group.
    public package(set) var slowedProvider: String? = nil
    /// What the results say of the run (`RunOptions.provenance`).
    public package(set) var provenance = RunProvenance()
}

/// What a run adds to a validated plan, from its command line rather than its scenario.
public struct RunOptions: Sendable {
    /// Where the run keeps its files (the report folder); nil: a fresh temporary folder.
    public var dataDirectory: String?
    /// The slice of the clients to run (`--shard K/N`); nil: every client.
    public var shard: Shard?
    /// When the clients begin (`--start-at`); nil: at once.
    public var startAt: Date?
    /// Report formats beside the scenario's (`--format`), each added once.
    public var formats: [String]
    /// Test-only: steps made slower on purpose (`--test-slowdown`).
    public var slowdowns: [Step: Double]
    /// Test-only: the client provider whose groups alone are slowed; nil: every group.
    public var slowedProvider: String?
    /// What the results say of the run: its id (`--run-id`; nil: a new one, or none for a
    /// shard), the user's labels (`--tag`) and the lab that ran it.
    public var provenance: RunProvenance

    /// Options; none by default.
    public init(
        dataDirectory: String? = nil,
        shard: Shard? = nil,
        startAt: Date? = nil,
        formats: [String] = [],
        slowdowns: [Step: Double] = [:],
        slowedProvider: String? = nil,
        provenance: RunProvenance = RunProvenance()
    ) {
        self.slowedProvider = slowedProvider
        self.dataDirectory = dataDirectory
        self.shard = shard
        self.startAt = startAt
        self.formats = formats
        self.slowdowns = slowdowns
        self.provenance = provenance
    }
}

/// What a run's results say of where they came from, beside the machine and the build.
public struct RunProvenance: Sendable {
    /// The run's id; nil: a new one, or none for a shard (`lab merge` refuses shards of
    /// different runs, so shards are given one).
    public var runId: String?
    /// The user's labels.
    public var tags: [String: String]
    /// The lab that ran it.
    public var lab: LabInfo?

    /// Provenance.
    public init(runId: String? = nil, tags: [String: String] = [:], lab: LabInfo? = nil) {
        self.runId = runId
        self.tags = tags
        self.lab = lab
    }
}

extension Plan {
    /// This plan with a run's options. Throws `.invalidScenario` for a shard of more slices
    /// than the scenario has clients.
    public func with(_ options: RunOptions) throws -> Plan {
        var plan = self
        if let shard = options.shard, shard.count > self.scenario.clients.count {
            throw LabError(
                .invalidScenario,
                "--shard \(shard): \(self.scenario.clients.count) clients cannot make \(shard.count) slices"
            )
        }
        plan.dataDirectory = options.dataDirectory
        plan.shard = options.shard
        plan.startAt = options.startAt
        plan.scenario.report.formats += options.formats.filter { !self.scenario.report.formats.contains($0) }
        plan.slowdowns = options.slowdowns
        plan.slowedProvider = options.slowedProvider
        plan.provenance = options.provenance
        return plan
    }

    /// `result`, a run of this plan, made whole: the run's provenance, and its thresholds
    /// judged. The one place a run's thresholds are judged (a merge of shards judges the
    /// whole, `lab merge`): not for a shard, whose counts and rates cannot hold on one slice
    /// of the clients, nor for one flow of a counted run, whose plan has no thresholds.
    public func finish(_ result: RunResult) -> RunResult {
        var result = result
        result.metadata.scenarioFile = self.file
        result.metadata.lab = self.provenance.lab
        result.metadata.runId = self.provenance.runId ?? (self.shard == nil ? UUID().uuidString.lowercased() : nil)
        result.metadata.tags = self.provenance.tags.isEmpty ? nil : self.provenance.tags
        result.thresholds = self.shard == nil ? Threshold.outcomes(self.thresholds, of: result) : []
        return result
    }
}

/// One of N equal slices of a scenario's clients, every N-th from the K-th: `lab run --shard K/N`.
///
/// Clients keep their index in the whole population, so each one's seed, ramp-up offset
/// and open-model schedule are those it has in the unsharded run, and no two shards share a
/// seed: N shards together run exactly the unsharded run's clients and exchanges.
public struct Shard: Sendable, Hashable, CustomStringConvertible {
    /// Which slice, 1 to `count`.
    public var index: Int
    /// How many slices.
    public var count: Int

    /// `K/N` with 1 ≤ K ≤ N; nil otherwise.
    public init?(parsing text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]), count >= 1,
            (1...count).contains(index)
        else { return nil }
        self.index = index
        self.count = count
    }

    /// A shard.
    public init(index: Int, count: Int) {
        precondition(count >= 1 && (1...count).contains(index), "shard \(index)/\(count)")
        self.index = index
        self.count = count
    }

    /// `K/N`.
    public var description: String { "\(self.index)/\(self.count)" }

    /// The indices of this slice's clients among `population`: every N-th client from the
    /// K-th, so that each slice spreads over the whole ramp-up and the whole open-model
    /// schedule as the population does, and its measured window is the whole run's (slices cut
    /// in blocks ramped up one after another: two shards of 1,000 clients ramped over 1 s
    /// measured from 0.02 and 0.54 s). Slices differ by at most one client.
    public func clients(of population: Int) -> ClientSlice {
        ClientSlice(first: self.index - 1, step: self.count, population: population)
    }
}

/// The clients of a run or of a shard: every `step`-th index of the population from `first`.
public struct ClientSlice: RandomAccessCollection, Sendable, Hashable {
    /// The first client's index.
    public let origin: Int
    /// The distance between two of the slice's clients.
    public let step: Int
    /// How many clients the slice holds.
    public let count: Int

    /// Every `step`-th client of `population` from `first`.
    public init(first: Int, step: Int, population: Int) {
        self.origin = first
        self.step = step
        self.count = population > first ? (population - first + step - 1) / step : 0
    }

    /// The whole population.
    public static func all(_ population: Int) -> ClientSlice {
        ClientSlice(first: 0, step: 1, population: population)
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { self.count }
    public subscript(position: Int) -> Int { self.origin + position * self.step }

    /// How many of the slice's clients have an index below `bound`.
    public func count(below bound: Int) -> Int {
        bound > self.origin ? Swift.min(self.count, (bound - self.origin + self.step - 1) / self.step) : 0
    }
}

/// Every problem found in a scenario, as one error.
public struct ScenarioErrors: Error, Sendable, CustomStringConvertible {
    /// The file, if any.
    public var file: String?
    /// The problems, in the order found.
    public var problems: [ScenarioProblem]

    /// Errors in a file.
    public init(file: String?, problems: [ScenarioProblem]) {
        self.file = file
        self.problems = problems
    }

    /// One line per problem, under a heading naming the file.
    public var description: String {
        let count = self.problems.count
        let heading = "\(self.file ?? "The scenario") has \(count) problem\(count == 1 ? "" : "s"):"
        return ([heading] + self.problems.map { "  \($0)" }).joined(separator: "\n")
    }

    /// As a `LabError` of code `.invalidScenario`.
    public var labError: LabError { LabError(.invalidScenario, self.description) }
}
