import Foundation
import LabCore

/// `results.json`'s body: a whole `RunResult`, histograms included, so that runs can be merged
/// and compared. Beside what a run measured, the document holds figures for its readers only
/// (the run's `errors`, each step's `statistics`), written from the measurements and not read
/// back. The blocks later versions added (`calibration`, `memory`, `intervals`, `cpu`, …) are
/// absent from documents written before them and read as empty. `RunResult.jsonData()` and
/// `RunResult.read(from:)` (RunResult+JSON.swift) write and read the file.
extension RunResult: Codable {
    enum CodingKeys: String, CodingKey {
        case format, metadata, scenarioText, measuredNanoseconds, totalNanoseconds, plannedIterations
        case completedIterations, warmupIterations, stoppedByDeadline, errors, thresholds, groups
        case calibration, rounds, memory, intervals, cpu, stages, matrixMetric
    }

    /// Decodes a run; throws if the format is unknown, a group or step appears twice, or a
    /// histogram is invalid (a `LabError` with the JSON path).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let format = try container.decode(String.self, forKey: .format)
        guard format == Self.format else {
            throw LabError(
                .invalidScenario,
                "Unknown results format '\(format)'; this version of lab reads '\(Self.format)'"
            )
        }
        let metadata = try container.decode(RunMetadata.self, forKey: .metadata)
        let scenarioText = try container.decode(String.self, forKey: .scenarioText)
        let measuredNanoseconds = try container.decode(UInt64.self, forKey: .measuredNanoseconds)
        let totalNanoseconds = try container.decode(UInt64.self, forKey: .totalNanoseconds)
        let plannedIterations = try container.decodeIfPresent(Int.self, forKey: .plannedIterations)
        let completedIterations = try container.decode(Int.self, forKey: .completedIterations)
        let warmupIterations = try container.decode(Int.self, forKey: .warmupIterations)
        let stoppedByDeadline = try container.decode(Bool.self, forKey: .stoppedByDeadline)
        // For readers only: recomputed from the groups, but a document has always had it.
        _ = try container.decode(UInt64.self, forKey: .errors)
        let thresholds = try container.decode([ThresholdOutcome].self, forKey: .thresholds)
        let groups = try Self.distinct(try container.decode([GroupResult].self, forKey: .groups))
        self.init(
            metadata: metadata,
            scenarioText: scenarioText,
            groups: groups,
            measuredNanoseconds: measuredNanoseconds,
            totalNanoseconds: totalNanoseconds,
            plannedIterations: plannedIterations,
            completedIterations: completedIterations,
            warmupIterations: warmupIterations,
            stoppedByDeadline: stoppedByDeadline,
            thresholds: thresholds
        )
        try self.decodeBlocks(container)
    }

    /// The blocks a document may lack, each absent in documents written before runs kept it.
    private mutating func decodeBlocks(_ container: KeyedDecodingContainer<CodingKeys>) throws {
        self.calibration = try container.decodeIfPresent(Calibration.self, forKey: .calibration)
        self.rounds = try container.decodeIfPresent([RoundResult].self, forKey: .rounds) ?? []
        self.memory = try container.decodeIfPresent(RunMemory.self, forKey: .memory)
        self.intervals = try container.decodeIfPresent(RunIntervals.self, forKey: .intervals)
        self.cpu = try container.decodeIfPresent(RunCPU.self, forKey: .cpu)
        self.stages = try container.decodeIfPresent(LoadStages.self, forKey: .stages)
        self.matrixMetric = try container.decodeIfPresent(String.self, forKey: .matrixMetric)
    }

    /// `groups`, unless a group appears twice.
    private static func distinct(_ groups: [GroupResult]) throws -> [GroupResult] {
        var seenKeys: Set<GroupKey> = []
        for (index, group) in groups.enumerated() where !seenKeys.insert(group.key).inserted {
            throw LabError(.invalidScenario, "groups[\(index)]: group '\(group.key)' appears twice")
        }
        return groups
    }

    /// Encodes the run with its readers' figures; empty rounds and absent blocks are left out.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Self.format, forKey: .format)
        try container.encode(self.metadata, forKey: .metadata)
        try container.encode(self.scenarioText, forKey: .scenarioText)
        try container.encode(self.measuredNanoseconds, forKey: .measuredNanoseconds)
        try container.encode(self.totalNanoseconds, forKey: .totalNanoseconds)
        try container.encodeIfPresent(self.plannedIterations, forKey: .plannedIterations)
        try container.encode(self.completedIterations, forKey: .completedIterations)
        try container.encode(self.warmupIterations, forKey: .warmupIterations)
        try container.encode(self.stoppedByDeadline, forKey: .stoppedByDeadline)
        try container.encode(self.errorCount, forKey: .errors)
        try container.encode(self.thresholds, forKey: .thresholds)
        let window = self.measuredNanoseconds
        try container.encode(self.groups.map { WindowedGroup(group: $0, window: window) }, forKey: .groups)
        try container.encodeIfPresent(self.calibration, forKey: .calibration)
        try container.encodeIfPresent(self.rounds.isEmpty ? nil : self.rounds, forKey: .rounds)
        try container.encodeIfPresent(self.memory, forKey: .memory)
        try container.encodeIfPresent(self.intervals, forKey: .intervals)
        try container.encodeIfPresent(self.cpu, forKey: .cpu)
        try container.encodeIfPresent(self.stages, forKey: .stages)
        try container.encodeIfPresent(self.matrixMetric, forKey: .matrixMetric)
    }

    /// A group as the run encodes it: its steps' statistics need the run's measured window.
    private struct WindowedGroup: Encodable {
        var group: GroupResult
        var window: UInt64

        func encode(to encoder: any Encoder) throws {
            try self.group.encode(to: encoder, window: self.window)
        }
    }
}
