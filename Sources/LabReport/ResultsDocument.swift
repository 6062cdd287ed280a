public import Foundation
import Histogram
public import LabCore
public import LabResults

/// The contents of `results.json`: a whole `RunResult`, histograms included, so runs can be merged and compared.
public struct ResultsDocument: Codable, Sendable, Equatable {
    /// The format tag; `RunResult.format` for documents this version writes.
    public var format: String
    /// Facts about the run.
    public var metadata: RunMetadata
    /// The scenario file's text, as run.
    public var scenarioText: String
    /// Wall time of the measured part of the run, in nanoseconds.
    public var measuredNanoseconds: UInt64
    /// Wall time of the whole run, in nanoseconds.
    public var totalNanoseconds: UInt64
    /// Measured iterations the scenario asked for, or nil for an open model.
    public var plannedIterations: Int?
    /// Measured iterations done, failed ones included.
    public var completedIterations: Int
    /// Warm-up iterations done and left out.
    public var warmupIterations: Int
    /// Whether the deadline stopped the run early.
    public var stoppedByDeadline: Bool
    /// Total failed iterations; for readers only, recomputed from the groups on load.
    public var errors: UInt64
    /// Each threshold and whether it held.
    public var thresholds: [ThresholdOutcome]
    /// One entry per group, sorted by key.
    public var groups: [Group]
    /// The calibration block (`Calibration`); absent in documents written before runs calibrated.
    public var calibration: Calibration?
    /// Per-round medians of a run with rounds (`RoundResult`); absent otherwise.
    public var rounds: [RoundResult]?
    /// The heap at the run's moments (`RunMemory`); absent when not measured (not on jemalloc,
    /// or written before runs measured it).
    public var memory: RunMemory?
    /// The run over time (`RunIntervals`): each group's step histograms and failures per
    /// interval; absent when not kept.
    public var intervals: RunIntervals?
    /// Where the run's CPU time went (`RunCPU`); absent in documents written before runs measured it.
    public var cpu: RunCPU?
    /// An open load's stages (`LoadStages`); absent without.
    public var stages: LoadStages?
    /// The matrix chart's figure (`RunResult.matrixMetric`); absent without a matrix.
    public var matrixMetric: String?

    /// One group's measurements.
    public struct Group: Codable, Sendable, Equatable {
        /// Which group.
        public var key: GroupKey
        /// The flow plugin that ran.
        public var flowKind: String
        /// Whether the suite is insecure.
        public var insecure: Bool
        /// Failed iterations by kind.
        public var errors: [String: UInt64]
        /// Each error kind's first message (`GroupResult.errorMessages`); absent (empty) without errors.
        public var errorMessages: [String: String] = [:]
        /// Measured iterations, failed ones included.
        public var iterations: UInt64
        /// The steps, in report order.
        public var steps: [StepEntry]
        /// Outcome counts by name; absent (empty) in documents written before flows counted outcomes.
        public var outcomes: [String: UInt64] = [:]
        /// Bytes on the wire by step name, over the measured iterations (`GroupResult.traffic`);
        /// absent (empty) when nothing was counted.
        public var traffic: [String: StepTraffic] = [:]
        /// Bytes on the wire by step name during set-up (`GroupResult.setupTraffic`).
        public var setupTraffic: [String: StepTraffic] = [:]
        /// What TCP did by step name (`GroupResult.packets`); absent (empty) unless read.
        public var packets: [String: StepPackets] = [:]
        /// What TCP did by step name during set-up (`GroupResult.setupPackets`).
        public var setupPackets: [String: StepPackets] = [:]
        /// A matrix cell's values (`GroupResult.parameters`); absent (empty) otherwise.
        public var parameters: [String: String] = [:]

        enum CodingKeys: String, CodingKey {
            case key, flowKind, insecure, errors, errorMessages, iterations, steps, outcomes, traffic, setupTraffic
            case packets, setupPackets, parameters
        }
    }

    /// One step's figures and histogram.
    public struct StepEntry: Codable, Sendable, Equatable {
        /// The step's report name, e.g. `exchange`.
        public var step: String
        /// The figures, as the other reports show them; for readers only, recomputed on load.
        public var statistics: StepStatistics
        /// Every sample, exactly.
        public var histogram: SparseHistogram
        /// Samples whose thread was preempted while the step ran (`StepDetail`); absent in
        /// documents written before runs kept it, and for a server's own report.
        public var preempted: UInt64? = nil
        /// The wall times of the samples that were not preempted.
        public var unpreempted: SparseHistogram? = nil
        /// The samples' CPU times; absent for steps that move between threads (the exchange).
        public var cpu: SparseHistogram? = nil
        /// Each sample's counted work, in a counted run (`lab run --counted`).
        public var counts: WorkCounts? = nil
    }

    /// The document for `result`.
    public init(_ result: RunResult) {
        self.format = RunResult.format
        self.metadata = result.metadata
        self.scenarioText = result.scenarioText
        self.measuredNanoseconds = result.measuredNanoseconds
        self.totalNanoseconds = result.totalNanoseconds
        self.plannedIterations = result.plannedIterations
        self.completedIterations = result.completedIterations
        self.warmupIterations = result.warmupIterations
        self.stoppedByDeadline = result.stoppedByDeadline
        self.errors = result.errorCount
        self.thresholds = result.thresholds
        self.calibration = result.calibration
        self.rounds = result.rounds.isEmpty ? nil : result.rounds
        self.memory = result.memory
        self.intervals = result.intervals
        self.cpu = result.cpu
        self.stages = result.stages
        self.matrixMetric = result.matrixMetric
        self.groups = result.groups.map { group in
            Group(
                key: group.key,
                flowKind: group.flowKind,
                insecure: group.insecure,
                errors: group.errors,
                errorMessages: group.errorMessages,
                iterations: group.iterations,
                steps: group.orderedSteps.map { entry in
                    let detail = group.details[entry.step]
                    return StepEntry(
                        step: entry.step.name,
                        statistics: result.statistics(group, entry.step)
                            ?? StepStatistics(entry.histogram, window: result.measuredNanoseconds),
                        histogram: SparseHistogram(entry.histogram),
                        preempted: detail?.preempted,
                        unpreempted: detail.map { SparseHistogram($0.unpreempted) },
                        cpu: detail?.cpu.map(SparseHistogram.init),
                        counts: detail?.counts
                    )
                },
                outcomes: group.outcomes,
                traffic: Self.named(group.traffic),
                setupTraffic: Self.named(group.setupTraffic),
                packets: Self.named(group.packets),
                setupPackets: Self.named(group.setupPackets),
                parameters: group.parameters
            )
        }
    }

    private static func named<Value>(_ byStep: [Step: Value]) -> [String: Value] {
        Dictionary(uniqueKeysWithValues: byStep.map { ($0.key.name, $0.value) })
    }

    private static func stepped<Value>(_ byName: [String: Value]) -> [Step: Value] {
        Dictionary(uniqueKeysWithValues: byName.map { (Step($0.key), $0.value) })
    }

    /// The run this document describes; throws if the format is unknown or a histogram is invalid.
    public func runResult() throws -> RunResult {
        guard self.format == RunResult.format else {
            throw LabError(
                .invalidScenario,
                "Unknown results format '\(self.format)'; this version of lab reads '\(RunResult.format)'"
            )
        }
        var seenKeys: Set<GroupKey> = []
        let groups = try self.groups.enumerated().map { groupIndex, group in
            guard seenKeys.insert(group.key).inserted else {
                throw LabError(.invalidScenario, "groups[\(groupIndex)]: group '\(group.key)' appears twice")
            }
            var steps: [Step: Histogram<UInt64>] = [:]
            var details: [Step: StepDetail] = [:]
            for (stepIndex, entry) in group.steps.enumerated() {
                let path = "groups[\(groupIndex)].steps[\(stepIndex)]"
                guard steps[Step(entry.step)] == nil else {
                    throw LabError(.invalidScenario, "\(path): step '\(entry.step)' appears twice in one group")
                }
                steps[Step(entry.step)] = try entry.histogram.histogram(path: "\(path).histogram")
                if let preempted = entry.preempted, let unpreempted = entry.unpreempted {
                    details[Step(entry.step)] = StepDetail(
                        preempted: preempted,
                        unpreempted: try unpreempted.histogram(path: "\(path).unpreempted"),
                        cpu: try entry.cpu?.histogram(path: "\(path).cpu"),
                        counts: entry.counts
                    )
                }
            }
            var result = GroupResult(
                key: group.key,
                flowKind: group.flowKind,
                insecure: group.insecure,
                steps: steps,
                errors: group.errors,
                iterations: group.iterations,
                outcomes: group.outcomes
            )
            result.details = details
            result.errorMessages = group.errorMessages
            result.traffic = Self.stepped(group.traffic)
            result.setupTraffic = Self.stepped(group.setupTraffic)
            result.packets = Self.stepped(group.packets)
            result.setupPackets = Self.stepped(group.setupPackets)
            result.parameters = group.parameters
            return result
        }
        var result = RunResult(
            metadata: self.metadata,
            scenarioText: self.scenarioText,
            groups: groups,
            measuredNanoseconds: self.measuredNanoseconds,
            totalNanoseconds: self.totalNanoseconds,
            plannedIterations: self.plannedIterations,
            completedIterations: self.completedIterations,
            warmupIterations: self.warmupIterations,
            stoppedByDeadline: self.stoppedByDeadline,
            thresholds: self.thresholds
        )
        result.calibration = self.calibration
        result.rounds = self.rounds ?? []
        result.memory = self.memory
        result.intervals = self.intervals
        result.cpu = self.cpu
        result.stages = self.stages
        result.matrixMetric = self.matrixMetric
        return result
    }

    /// The document as `results.json` holds it: pretty-printed, keys sorted, dates in ISO 8601.
    public func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(Self.iso8601(date))
        }
        return Self.collapsingPairs(try encoder.encode(self))
    }

    /// `json` (as the pretty-printing encoder writes it) with each array of two numbers on one
    /// line: `[1292, 1]` for a histogram's `[value, count]` pair, where the encoder spends
    /// four lines and about 100 bytes. Histograms are most of a document: this makes it about
    /// a third of the size. Only a `[` followed by a line break can start a pair, and the
    /// encoder writes no raw line break inside a string, so no string is ever changed.
    static func collapsingPairs(_ json: Data) -> Data {
        let bytes = [UInt8](json)
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count / 2)
        let newline = UInt8(ascii: "\n")
        let space = UInt8(ascii: " ")
        func isNumeric(_ byte: UInt8) -> Bool {
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-")
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E")
                || byte == UInt8(ascii: "+")
        }
        // After a line break and its indentation: the number there and the index after it.
        func number(after index: Int) -> (Range<Int>, Int)? {
            guard index < bytes.count, bytes[index] == newline else { return nil }
            var start = index + 1
            while start < bytes.count, bytes[start] == space { start += 1 }
            var end = start
            while end < bytes.count, isNumeric(bytes[end]) { end += 1 }
            return end > start ? (start..<end, end) : nil
        }
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "["), let (first, afterFirst) = number(after: index + 1),
                afterFirst < bytes.count, bytes[afterFirst] == UInt8(ascii: ","),
                let (second, afterSecond) = number(after: afterFirst + 1),
                afterSecond < bytes.count, bytes[afterSecond] == newline
            {
                var close = afterSecond + 1
                while close < bytes.count, bytes[close] == space { close += 1 }
                if close < bytes.count, bytes[close] == UInt8(ascii: "]") {
                    output.append(byte)
                    output.append(contentsOf: bytes[first])
                    output.append(contentsOf: [UInt8(ascii: ","), space])
                    output.append(contentsOf: bytes[second])
                    output.append(UInt8(ascii: "]"))
                    index = close + 1
                    continue
                }
            }
            output.append(byte)
            index += 1
        }
        return Data(output)
    }

    /// Decodes a document from `data`; `source` names it in errors.
    public static func decode(_ data: Data, source: String = "results.json") throws -> ResultsDocument {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            for style in [Self.dateStyle, Date.ISO8601FormatStyle()] {
                if let date = try? style.parse(text) { return date }
            }
            throw DecodingError.dataCorruptedError(
                in: container,
                debugDescription: "'\(text)' is not an ISO 8601 date"
            )
        }
        // Check the tag first, so a document of another version says so instead of failing on a field.
        if let probe = try? decoder.decode(FormatProbe.self, from: data), let format = probe.format,
            format != RunResult.format
        {
            throw LabError(
                .invalidScenario,
                "\(source): unknown results format '\(format)'; this version of lab reads '\(RunResult.format)'"
            )
        }
        do {
            return try decoder.decode(ResultsDocument.self, from: data)
        } catch let error as DecodingError {
            throw LabError(
                .invalidScenario,
                "\(source) is not a crypto-lab results document: \(Self.describe(error))",
                cause: UnderlyingError(describing: error)
            )
        }
    }

    /// Reads the run saved in the `results.json` at `url`.
    public static func load(from url: URL) throws -> RunResult {
        let data = try InputFile.read(url.path)
        return try Self.decode(data, source: url.path).runResult()
    }

    /// ISO 8601 in UTC with milliseconds: `2026-01-01T00:00:00.000Z`.
    private static let dateStyle = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    /// `date` as results.json writes it, rounded to the nearest millisecond. Foundation's
    /// style truncates, and a date it parsed from `.002Z` is a hair below that millisecond
    /// (binary fractions): formatted again it read `.001Z`, so half the instants lost a
    /// millisecond at each `lab merge`. The middle of the millisecond truncates to it.
    static func iso8601(_ date: Date) -> String {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
        return Date(timeIntervalSince1970: (milliseconds + 0.5) / 1000).formatted(Self.dateStyle)
    }

    /// Just the format tag.
    private struct FormatProbe: Decodable {
        var format: String?
    }

    /// `metadata.startedAt: …`: the JSON path and what is wrong there.
    private static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return path.isEmpty ? "(top level)" : String(path.drop { $0 == "." })
        }
        switch error {
        case .keyNotFound(let key, let context):
            return "\(path(context)): missing key '\(key.stringValue)'"
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return "\(path(context)): \(context.debugDescription)"
        @unknown default:
            return String(describing: error)
        }
    }
}

extension ResultsDocument.Group {
    /// Decodes a group; `outcomes` may be missing (documents from before outcomes were counted).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.key = try container.decode(GroupKey.self, forKey: .key)
        self.flowKind = try container.decode(String.self, forKey: .flowKind)
        self.insecure = try container.decode(Bool.self, forKey: .insecure)
        self.errors = try container.decode([String: UInt64].self, forKey: .errors)
        self.errorMessages = try container.decodeIfPresent([String: String].self, forKey: .errorMessages) ?? [:]
        self.iterations = try container.decode(UInt64.self, forKey: .iterations)
        self.steps = try container.decode([ResultsDocument.StepEntry].self, forKey: .steps)
        self.outcomes = try container.decodeIfPresent([String: UInt64].self, forKey: .outcomes) ?? [:]
        self.traffic = try container.decodeIfPresent([String: StepTraffic].self, forKey: .traffic) ?? [:]
        self.setupTraffic = try container.decodeIfPresent([String: StepTraffic].self, forKey: .setupTraffic) ?? [:]
        self.packets = try container.decodeIfPresent([String: StepPackets].self, forKey: .packets) ?? [:]
        self.setupPackets = try container.decodeIfPresent([String: StepPackets].self, forKey: .setupPackets) ?? [:]
        self.parameters = try container.decodeIfPresent([String: String].self, forKey: .parameters) ?? [:]
    }

    /// Encodes a group, leaving out the traffic blocks when nothing was counted.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.key, forKey: .key)
        try container.encode(self.flowKind, forKey: .flowKind)
        try container.encode(self.insecure, forKey: .insecure)
        try container.encode(self.errors, forKey: .errors)
        if !self.errorMessages.isEmpty { try container.encode(self.errorMessages, forKey: .errorMessages) }
        try container.encode(self.iterations, forKey: .iterations)
        try container.encode(self.steps, forKey: .steps)
        try container.encode(self.outcomes, forKey: .outcomes)
        if !self.traffic.isEmpty { try container.encode(self.traffic, forKey: .traffic) }
        if !self.setupTraffic.isEmpty { try container.encode(self.setupTraffic, forKey: .setupTraffic) }
        if !self.packets.isEmpty { try container.encode(self.packets, forKey: .packets) }
        if !self.setupPackets.isEmpty { try container.encode(self.setupPackets, forKey: .setupPackets) }
        if !self.parameters.isEmpty { try container.encode(self.parameters, forKey: .parameters) }
    }
}
