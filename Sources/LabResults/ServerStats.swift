public import Foundation
public import Histogram
public import LabCore

/// What a server measured of its own work, as the `serverStats` request returns it: per
/// group (a cx/1 suite, a msg/1 op) the requests answered, the error answers by code and a
/// histogram per step. Totals since the server started; a client that wants its own run's
/// share asks before and after and takes the difference (`subtracting`).
public struct ServerStats: Codable, Sendable, Equatable {
    /// The format tag of documents this version writes.
    public static let format = "crypto-lab/server-stats/1"

    /// The format tag.
    public var format: String
    /// The server's crypto provider.
    public var provider: ProviderInfo
    /// The machine the server runs on.
    public var machine: MachineInfo
    /// The server's transport, e.g. `tcp`.
    public var transport: String
    /// When the server started.
    public var startedAt: Date
    /// One entry per group, sorted by name.
    public var groups: [Group]
    /// The server process's heap when it answered; nil from a server that does not measure
    /// it (jemalloc not its allocator, or an older lab).
    public var heap: HeapSnapshot? = nil
    /// Connections open when it answered (the request's own included); nil from an older lab.
    public var openConnections: Int? = nil
    /// The server process's CPU time when it answered; nil from an older lab.
    public var cpu: ProcessCPU? = nil
    /// The server's monotonic clock when it answered, in nanoseconds: two answers' difference
    /// is the time between them on the server's clock; nil from an older lab.
    public var clockNanoseconds: UInt64? = nil

    /// One group's totals.
    public struct Group: Codable, Sendable, Equatable {
        /// The group: a suite (`x25519`) or a msg/1 op (`login`).
        public var name: String
        /// Requests answered without error.
        public var answered: UInt64
        /// Error answers, by code.
        public var errors: [String: UInt64]
        /// The server's steps, in report order, each with its histogram.
        public var steps: [StepHistogram]
        /// What TCP did for the group's answers by step name, from a server run with
        /// `--packets`; nil otherwise (and from an older lab).
        public var packets: [String: StepPackets]? = nil

        /// A group.
        public init(
            name: String,
            answered: UInt64,
            errors: [String: UInt64],
            steps: [StepHistogram],
            packets: [String: StepPackets]? = nil
        ) {
            self.name = name
            self.answered = answered
            self.errors = errors
            self.steps = steps
            self.packets = packets
        }
    }

    /// One step's histogram.
    public struct StepHistogram: Codable, Sendable, Equatable {
        /// The step's name, e.g. `sign`.
        public var step: String
        /// Every sample, exactly.
        public var histogram: SparseHistogram

        /// An entry.
        public init(step: String, histogram: SparseHistogram) {
            self.step = step
            self.histogram = histogram
        }
    }

    /// A document.
    public init(provider: ProviderInfo, machine: MachineInfo, transport: String, startedAt: Date, groups: [Group]) {
        self.format = Self.format
        self.provider = provider
        self.machine = machine
        self.transport = transport
        self.startedAt = startedAt
        self.groups = groups.sorted { $0.name < $1.name }
    }

    /// The JSON form carried in the `stats` field.
    public func encoded() throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .millisecondsSince1970
        return Array(try encoder.encode(self))
    }

    /// Decodes the `stats` field; throws `.malformedMessage` naming what is wrong.
    public static func decode(_ bytes: [UInt8]) throws -> ServerStats {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        let stats: ServerStats
        do {
            stats = try decoder.decode(ServerStats.self, from: Data(bytes))
        } catch {
            throw LabError(
                .malformedMessage,
                "The server's statistics are not a \(Self.format) document",
                cause: UnderlyingError(describing: error)
            )
        }
        guard stats.format == Self.format else {
            throw LabError(.malformedMessage, "The server's statistics are '\(stats.format)', not '\(Self.format)'")
        }
        return stats
    }

    /// What was added between `earlier` and this snapshot of the same server: counts and
    /// histogram buckets subtract exactly (a server's totals only grow). Throws if the server
    /// restarted in between (its start time changed).
    public func subtracting(_ earlier: ServerStats) throws -> ServerStats {
        guard earlier.startedAt == self.startedAt else {
            throw LabError(
                .unsupported,
                "The server restarted during the run (started \(earlier.startedAt), then \(self.startedAt)): its totals do not subtract"
            )
        }
        var result = self
        result.groups = []
        let before = Dictionary(earlier.groups.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for group in self.groups {
            let old = before[group.name]
            var errors: [String: UInt64] = [:]
            for (code, count) in group.errors {
                let difference = count &- (old?.errors[code] ?? 0)
                if difference > 0, difference <= count { errors[code] = difference }
            }
            var steps: [StepHistogram] = []
            for entry in group.steps {
                let now = try entry.histogram.histogram(path: "\(group.name).\(entry.step)")
                let then = try old?.steps.first { $0.step == entry.step }
                    .map { try $0.histogram.histogram(path: "\(group.name).\($0.step)") }
                let added = then.map { now.subtracting($0) } ?? now
                if added.totalCount > 0 {
                    steps.append(StepHistogram(step: entry.step, histogram: SparseHistogram(added)))
                }
            }
            let answered = group.answered >= (old?.answered ?? 0) ? group.answered - (old?.answered ?? 0) : 0
            let packets = group.packets.map { now in
                Dictionary(
                    uniqueKeysWithValues: now.compactMap { step, packets -> (String, StepPackets)? in
                        let added = old?.packets?[step].map { packets.subtracting($0) } ?? packets
                        return added.roundTrips > 0 ? (step, added) : nil
                    }
                )
            }
            if answered > 0 || !errors.isEmpty || !steps.isEmpty {
                result.groups.append(Group(name: group.name, answered: answered, errors: errors, steps: steps, packets: packets))
            }
        }
        return result
    }
}

extension Histogram<UInt64> {
    /// The samples in this histogram that are not in `earlier`, an earlier state of the same
    /// recording: bucket by bucket, counts subtract exactly. Each remaining bucket is
    /// recorded at its highest equivalent value, but for the exact maximum when its bucket
    /// is new; so percentiles agree within the histogram's precision (3 significant digits).
    public func subtracting(_ earlier: Histogram<UInt64>) -> Histogram<UInt64> {
        var result = Histogram<UInt64>(numberOfSignificantValueDigits: self.numberOfSignificantValueDigits)
        // By bucket, from `earlier`'s own recorded buckets: `countForValue` traps on a value
        // past an auto-resized histogram's current range.
        var before: [UInt64: UInt64] = [:]
        for bucket in earlier.recordedValues() {
            before[earlier.highestEquivalentForValue(bucket.value), default: 0] += UInt64(bucket.count)
        }
        for bucket in self.recordedValues() {
            let earlierCount = before[self.highestEquivalentForValue(bucket.value)] ?? 0
            let count = UInt64(bucket.count)
            guard count > earlierCount else { continue }
            // The top bucket, if it is all new, holds the exact maximum: keep it exact.
            let exactMax =
                earlierCount == 0 && self.valuesAreEquivalent(bucket.value, self.maxRecorded)
                && !(earlier.totalCount > 0 && self.valuesAreEquivalent(earlier.maxRecorded, self.maxRecorded))
            _ = result.record(exactMax ? self.maxRecorded : bucket.value, count: count - earlierCount)
        }
        return result
    }
}
