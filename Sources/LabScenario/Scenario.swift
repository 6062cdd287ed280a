public import Foundation
public import LabCore

/// A scenario file: the experiment `lab run` carries out. Every field but `name` and `flows`
/// has a default; docs/scenarios.md lists them all.
public struct Scenario: Sendable, Decodable {
    /// Names the run and its report folder (`Reports/<name>/…`).
    public var name: String
    /// Free text shown at the top of the report.
    public var description: String
    /// Seeds each client's choice of flow, so runs pick the same sequence.
    public var seed: UInt64
    /// The one server.
    public var server: ServerSpec
    /// The simulated clients.
    public var clients: ClientsSpec
    /// How load is applied.
    public var load: LoadSpec
    /// What each client does, chosen per iteration by weight.
    public var flows: [FlowEntry]
    /// Pass/fail conditions, metric → condition, e.g. `"cx.exchange.p99": "< 50 ms"`.
    public var thresholds: [String: String]
    /// Which reports to write.
    public var report: ReportSpec

    static let keys = [
        "$schema", "name", "description", "seed", "server", "clients", "load", "flows", "thresholds", "report",
    ]

    /// Decodes strictly, recording problems in the decoder's `ProblemLog`.
    public init(from decoder: any Decoder) throws {
        let object = ScenarioObject(decoder, keys: Self.keys)
        self.name =
            object.required(
                "name",
                as: String.self,
                expected: "a name of 1 to 64 letters, digits, '.', '_' or '-'",
                isValid: Self.isValidName
            ) ?? "unnamed"
        // The JSON Schema editors check the file against (docs/scenario.schema.json); the lab
        // checks the file itself, and only asks that it be a string.
        let _: String? = object.optional("$schema", expected: "a string: the URL or path of the scenario schema")
        self.description = object.optional("description", expected: "a string") ?? ""
        self.seed = object.optional("seed", expected: "a non-negative integer") ?? 1
        self.server = object.optional("server", expected: "an object") ?? ServerSpec()
        self.clients = object.optional("clients", expected: "an object") ?? ClientsSpec()
        self.load = object.optional("load", expected: "an object") ?? LoadSpec()
        // The first client connects at the start of the ramp-up and then waits for the last,
        // so a server that closes silent connections must wait longer than both together.
        let hold = self.clients.rampUp.nanoseconds &+ self.load.duration.nanoseconds
        if self.load.model == .idle, self.load.duration > .zero, hold >= self.server.idleTimeout.nanoseconds {
            object.log.add(
                object.codingPath + [AnyCodingKey("load"), AnyCodingKey("duration")],
                "expected the clients' ramp-up (\(self.clients.rampUp)) plus the idle duration (\(self.load.duration)) to be shorter than server.idleTimeout (\(self.server.idleTimeout)), or the server closes the first clients' connections during the hold; shorten them or raise server.idleTimeout (and `lab serve --idle-timeout`)"
            )
        }
        // An entry with a matrix stands for one entry per combination (`FlowEntry.expanded`),
        // labelled by what sets it apart from the flow's other entries (`FlowEntry.labelled`).
        let entries =
            (object.required(
                "flows",
                as: [FlowEntry].self,
                expected: "a non-empty array of flows",
                isValid: { !$0.isEmpty }
            ) ?? []).enumerated().flatMap { $1.expanded(origin: $0) }
        self.flows = FlowEntry.labelled(entries)
        var thresholds: [String: String] = [:]
        let rawThresholds: [String: JSONValue]? = object.optional(
            "thresholds",
            expected: "an object of metric → condition strings"
        )
        for (metric, value) in rawThresholds ?? [:] {
            guard case .string(let condition) = value else {
                object.log.add(
                    object.codingPath + [AnyCodingKey("thresholds"), AnyCodingKey(metric)],
                    "expected a condition string such as \"< 50 ms\", found \(value)"
                )
                continue
            }
            thresholds[metric] = condition
        }
        self.thresholds = thresholds
        self.report = object.optional("report", expected: "an object") ?? ReportSpec()
    }

    /// A scenario built in code.
    public init(
        name: String,
        description: String = "",
        seed: UInt64 = 1,
        server: ServerSpec = ServerSpec(),
        clients: ClientsSpec = ClientsSpec(),
        load: LoadSpec = LoadSpec(),
        flows: [FlowEntry],
        thresholds: [String: String] = [:],
        report: ReportSpec = ReportSpec()
    ) {
        self.name = name
        self.description = description
        self.seed = seed
        self.server = server
        self.clients = clients
        self.load = load
        self.flows = flows
        self.thresholds = thresholds
        self.report = report
    }

    static func isValidName(_ name: String) -> Bool {
        (1...64).contains(name.count)
            && name.allSatisfy { ($0.isASCII && ($0.isLetter || $0.isNumber)) || $0 == "." || $0 == "_" || $0 == "-" }
            && name.first != "."
    }

    /// Decodes `data`: the scenario, and every problem of shape found on the way.
    ///
    /// A file that is not strict JSON (`StrictJSON`: no trailing commas, comments or
    /// duplicate keys) yields one problem at `$`, naming the line and column, and no scenario.
    public static func decode(_ data: Data) -> (scenario: Scenario?, problems: [ScenarioProblem]) {
        if let syntax = StrictJSON.check(data) {
            return (nil, [ScenarioProblem(path: "$", message: "not valid JSON: \(syntax)")])
        }
        let log = ProblemLog()
        let decoder = JSONDecoder()
        decoder.userInfo[ProblemLog.userInfoKey] = log
        do {
            let scenario = try decoder.decode(Scenario.self, from: data)
            return (scenario, log.problems)
        } catch {
            return (nil, [ScenarioProblem(path: "$", message: "could not be read: \(error)")])
        }
    }
}

/// `"report"`: which reports to write.
public struct ReportSpec: Sendable, Decodable {
    /// Reporter names: `csv`, `markdown`, `html`, `json` (all four by default).
    public var formats: [String] = ["csv", "markdown", "html", "json"]
    /// Draw SVG charts beside the markdown report.
    public var charts: Bool = true
    /// The width of the run's intervals (`RunIntervals`: each step's histogram per interval,
    /// `timeseries.csv`, the over-time chart); zero keeps none.
    public var interval: TimeSpan = .seconds(1)
    /// The figure a matrix's chart draws against its parameter: `<step>.<stat>` (as in
    /// thresholds, e.g. `exchange.p50`) or `bytes.<direction>`.
    public var matrixMetric: String = "exchange.p50"
    /// Read each step's thread CPU time and preemption, and each exchange's process-wide
    /// preemption: the report's preempted shares, the percentiles of the samples not
    /// preempted and the CPU times. Off by default: the reads are system calls (about 1.5 µs
    /// per step, 0.6 µs per exchange) inside the exchange's time.
    public var stepUsage: Bool = false
    /// Read the kernel's TCP counters (`TCP_INFO`) around each round trip over a socket:
    /// the segments each step sent and received, and its retransmissions (report.md's
    /// Packets section). Off by default: two `getsockopt` calls per round trip, inside its time.
    public var packets: Bool = false

    static let keys = ["formats", "charts", "interval", "matrixMetric", "stepUsage", "packets"]
    /// What `interval` may be.
    public static let intervalExpectation =
        "\"0\" (no intervals) or a duration from \"100 ms\" to \"1 h\" such as \"1 s\" or \"10 s\""

    /// The defaults.
    public init() {}

    /// Decodes strictly.
    public init(from decoder: any Decoder) throws {
        let object = ScenarioObject(decoder, keys: Self.keys)
        if let formats: [JSONValue] = object.optional("formats", expected: "an array of reporter names") {
            self.formats = formats.enumerated().compactMap { index, value in
                guard case .string(let name) = value else {
                    object.log.add(
                        object.codingPath + [AnyCodingKey("formats"), AnyCodingKey(intValue: index)],
                        "expected a reporter name, found \(value)"
                    )
                    return nil
                }
                return name
            }
        }
        self.charts = object.optional("charts", expected: "true or false") ?? self.charts
        self.stepUsage = object.optional("stepUsage", expected: "true or false") ?? self.stepUsage
        self.packets = object.optional("packets", expected: "true or false") ?? self.packets
        self.matrixMetric =
            object.optional("matrixMetric", expected: "a figure such as \"exchange.p50\" or \"bytes.total\"")
            ?? self.matrixMetric
        self.interval =
            object.optional(
                "interval",
                expected: Self.intervalExpectation,
                isValid: { $0 == .zero || (TimeSpan.milliseconds(100)...TimeSpan.seconds(3600)).contains($0) }
            ) ?? self.interval
    }
}
