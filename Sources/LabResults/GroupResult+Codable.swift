import Foundation
import Histogram
import LabCore

/// A group as `results.json` holds it: its counts, then one entry per step in report order
/// (the histogram, the figures for readers, and the step's `StepDetail` beside them), then the
/// by-step blocks, keyed by step name and left out when empty. A group is encoded by its run
/// (`encode(to:window:)`), whose measured window its steps' rates are over.
extension GroupResult: Decodable {
    enum CodingKeys: String, CodingKey {
        case key, flowKind, insecure, errors, errorMessages, iterations, steps, outcomes, traffic, setupTraffic
        case packets, setupPackets, parameters
    }

    /// One step's entry.
    enum StepKeys: String, CodingKey {
        case step, statistics, histogram, preempted, unpreempted, cpu, counts
    }

    /// Decodes a group; what documents written before a block existed lack reads as empty.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            key: try container.decode(GroupKey.self, forKey: .key),
            flowKind: try container.decode(String.self, forKey: .flowKind),
            insecure: try container.decode(Bool.self, forKey: .insecure)
        )
        self.errors = try container.decode([String: UInt64].self, forKey: .errors)
        self.errorMessages = try container.decodeIfPresent([String: String].self, forKey: .errorMessages) ?? [:]
        self.iterations = try container.decode(UInt64.self, forKey: .iterations)
        var steps = try container.nestedUnkeyedContainer(forKey: .steps)
        let path = Self.jsonPath(decoder.codingPath)
        while !steps.isAtEnd {
            let index = steps.currentIndex
            let entry = try steps.nestedContainer(keyedBy: StepKeys.self)
            try self.decodeStep(entry, path: (path.isEmpty ? "" : path + ".") + "steps[\(index)]")
        }
        self.outcomes = try container.decodeIfPresent([String: UInt64].self, forKey: .outcomes) ?? [:]
        self.traffic = try Self.stepped(container, .traffic)
        self.setupTraffic = try Self.stepped(container, .setupTraffic)
        self.packets = try Self.stepped(container, .packets)
        self.setupPackets = try Self.stepped(container, .setupPackets)
        self.parameters = try container.decodeIfPresent([String: String].self, forKey: .parameters) ?? [:]
    }

    /// Adds one step's entry, found at `path`: its histogram, and its detail when it has one.
    private mutating func decodeStep(_ entry: KeyedDecodingContainer<StepKeys>, path: String) throws {
        let step = Step(try entry.decode(String.self, forKey: .step))
        // For readers only: recomputed from the histogram, but a document has always had it.
        _ = try entry.decode(StepStatistics.self, forKey: .statistics)
        let histogram = try entry.decode(SparseHistogram.self, forKey: .histogram)
        let preempted = try entry.decodeIfPresent(UInt64.self, forKey: .preempted)
        let unpreempted = try entry.decodeIfPresent(SparseHistogram.self, forKey: .unpreempted)
        let cpu = try entry.decodeIfPresent(SparseHistogram.self, forKey: .cpu)
        let counts = try entry.decodeIfPresent(WorkCounts.self, forKey: .counts)
        guard self.steps[step] == nil else {
            throw LabError(.invalidScenario, "\(path): step '\(step.name)' appears twice in one group")
        }
        self.steps[step] = try histogram.histogram(path: "\(path).histogram")
        if let preempted, let unpreempted {
            self.details[step] = StepDetail(
                preempted: preempted,
                unpreempted: try unpreempted.histogram(path: "\(path).unpreempted"),
                cpu: try cpu?.histogram(path: "\(path).cpu"),
                counts: counts
            )
        }
    }

    /// Encodes the group, its steps' figures over `window` nanoseconds; the by-step blocks and
    /// the error messages are left out when empty.
    func encode(to encoder: any Encoder, window: UInt64) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.key, forKey: .key)
        try container.encode(self.flowKind, forKey: .flowKind)
        try container.encode(self.insecure, forKey: .insecure)
        try container.encode(self.errors, forKey: .errors)
        if !self.errorMessages.isEmpty { try container.encode(self.errorMessages, forKey: .errorMessages) }
        try container.encode(self.iterations, forKey: .iterations)
        var steps = container.nestedUnkeyedContainer(forKey: .steps)
        for (step, histogram) in self.orderedSteps {
            try self.encodeStep(step, histogram, into: steps.nestedContainer(keyedBy: StepKeys.self), window: window)
        }
        try container.encode(self.outcomes, forKey: .outcomes)
        try Self.encodeNamed(self.traffic, &container, .traffic)
        try Self.encodeNamed(self.setupTraffic, &container, .setupTraffic)
        try Self.encodeNamed(self.packets, &container, .packets)
        try Self.encodeNamed(self.setupPackets, &container, .setupPackets)
        if !self.parameters.isEmpty { try container.encode(self.parameters, forKey: .parameters) }
    }

    /// One step's entry: its name, figures, histogram and what its detail holds.
    private func encodeStep(
        _ step: Step,
        _ histogram: Histogram<UInt64>,
        into entry: KeyedEncodingContainer<StepKeys>,
        window: UInt64
    ) throws {
        var entry = entry
        let detail = self.details[step]
        try entry.encode(step.name, forKey: .step)
        try entry.encode(self.statistics(step, histogram, window: window), forKey: .statistics)
        try entry.encode(SparseHistogram(histogram), forKey: .histogram)
        try entry.encodeIfPresent(detail?.preempted, forKey: .preempted)
        try entry.encodeIfPresent(detail.map { SparseHistogram($0.unpreempted) }, forKey: .unpreempted)
        try entry.encodeIfPresent(detail?.cpu.map(SparseHistogram.init), forKey: .cpu)
        try entry.encodeIfPresent(detail?.counts, forKey: .counts)
    }

    /// A by-step block read by step name; empty when absent.
    private static func stepped<Value: Decodable>(
        _ container: KeyedDecodingContainer<CodingKeys>,
        _ key: CodingKeys
    ) throws -> [Step: Value] {
        let byName = try container.decodeIfPresent([String: Value].self, forKey: key) ?? [:]
        return Dictionary(uniqueKeysWithValues: byName.map { (Step($0.key), $0.value) })
    }

    /// A by-step block written by step name, unless it is empty.
    private static func encodeNamed<Value: Encodable>(
        _ byStep: [Step: Value],
        _ container: inout KeyedEncodingContainer<CodingKeys>,
        _ key: CodingKeys
    ) throws {
        guard !byStep.isEmpty else { return }
        try container.encode(Dictionary(uniqueKeysWithValues: byStep.map { ($0.key.name, $0.value) }), forKey: key)
    }

    /// `groups[0].steps[1]`: a coding path as the lab's messages write JSON paths.
    static func jsonPath(_ codingPath: [any CodingKey]) -> String {
        let path = codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        return String(path.drop { $0 == "." })
    }
}
