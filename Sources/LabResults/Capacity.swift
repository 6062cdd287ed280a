import Foundation
import Histogram
import LabCore

/// An open load's stages as a run kept them (`load.stages`): each one's arrival rate and its
/// span from the intervals' origin, and the p99 bound the knee is judged by.
public struct LoadStages: Codable, Sendable, Equatable {
    /// One stage.
    public struct Stage: Codable, Sendable, Equatable {
        /// Arrivals per second offered.
        public var rate: Double
        /// Its start, in nanoseconds from the intervals' origin (the end of the warm-up).
        public var startNanoseconds: UInt64
        /// How long it lasts.
        public var durationNanoseconds: UInt64

        /// A stage.
        public init(rate: Double, startNanoseconds: UInt64, durationNanoseconds: UInt64) {
            self.rate = rate
            self.startNanoseconds = startNanoseconds
            self.durationNanoseconds = durationNanoseconds
        }
    }

    /// What a stage offers: arrivals per second (open model) or clients (closed model).
    public enum Offered: String, Codable, Sendable {
        case rate, clients
    }

    /// The stages in order.
    public var stages: [Stage]
    /// What each stage's `rate` is: arrivals per second, or (closed model) clients.
    public var offered: Offered = .rate
    /// The p99 a sustained stage stays under (`load.kneeP99`); nil: no knee is judged.
    public var kneeP99Nanoseconds: UInt64?

    /// Stages.
    public init(stages: [Stage], kneeP99Nanoseconds: UInt64?, offered: Offered = .rate) {
        self.stages = stages
        self.kneeP99Nanoseconds = kneeP99Nanoseconds
        self.offered = offered
    }

    enum CodingKeys: String, CodingKey {
        case stages, kneeP99Nanoseconds, offered
    }

    /// Decodes; `offered` is absent from documents written before closed loads had stages.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.stages = try container.decode([Stage].self, forKey: .stages)
        self.kneeP99Nanoseconds = try container.decodeIfPresent(UInt64.self, forKey: .kneeP99Nanoseconds)
        self.offered = try container.decodeIfPresent(Offered.self, forKey: .offered) ?? .rate
    }
}

/// Throughput and latency against offered load, stage by stage, for one group of a run with
/// stages; and the knee: the highest arrival rate the server sustains with p99 under the bound.
///
/// A stage's figures come from the run's intervals (`RunIntervals`): its latencies from the
/// exchanges due in it (measured from when they were due, so a server that falls behind shows
/// it), its throughput from the exchanges that ended in it. A stage is *sustained* when its
/// p99 is at most the bound, none of its exchanges failed, and the throughput was at least
/// `servedShare` of the offered rate.
public struct Capacity: Sendable, Equatable {
    /// One stage's figures.
    public struct Point: Sendable, Equatable {
        /// Arrivals per second offered.
        public var offered: Double
        /// Exchanges per second that ended, successfully, during the stage.
        public var throughput: Double
        /// Exchanges due in the stage, failed ones included.
        public var exchanges: UInt64
        /// Of those, failed.
        public var errors: UInt64
        /// The exchange's p50 and p99, in nanoseconds; nil without a successful exchange.
        public var p50: Double?
        public var p99: Double?
        /// Whether the stage held the bound (nil when the run names none).
        public var sustained: Bool?
        /// Whether the stage missed the bound only behind an earlier stage's backlog: none of
        /// its exchanges failed and it served at least its offered rate, so the server had
        /// room above that rate (open model only; nil when the run names no bound).
        public var draining: Bool?
    }

    /// The knee, where one was found.
    public struct Knee: Sendable, Equatable {
        /// The arrival rate at the knee, interpolated between the last sustained stage and the
        /// first that was not, where p99 (on a log scale) crosses the bound; the last
        /// sustained stage's rate when the next one failed exchanges instead.
        public var rate: Double
        /// The last stage the server kept up with (sustained or draining, by index), and the
        /// first that it did not.
        public var below: Int
        public var above: Int
    }

    /// The group.
    public var key: GroupKey
    /// One point per stage, in order.
    public var points: [Point]
    /// The bound, in nanoseconds, if the run named one.
    public var bound: Double?
    /// What the stages offer: arrivals per second, or clients.
    public var offered: LoadStages.Offered = .rate
    /// The knee, if the bound was crossed after a sustained stage.
    public var knee: Knee?

    /// The share of the offered rate a sustained stage must deliver: 90%.
    public static let servedShare = 0.9

    /// Each group's capacity in `result`; empty without stages or intervals, or when a stage
    /// does not fall on whole intervals.
    public static func of(_ result: RunResult) -> [Capacity] {
        guard let stages = result.stages, let intervals = result.intervals else { return [] }
        let width = intervals.width
        guard stages.stages.allSatisfy({ $0.startNanoseconds % width == 0 && $0.durationNanoseconds % width == 0 })
        else {
            return []
        }
        return intervals.groups.keys.sorted().compactMap { key in
            guard let slices = intervals.groups[key] else { return nil }
            return Capacity(key: key, slices: slices, width: width, stages: stages)
        }
    }

    init(key: GroupKey, slices: [Int: RunIntervals.Slice], width: UInt64, stages: LoadStages) {
        self.key = key
        self.offered = stages.offered
        self.bound = stages.kneeP99Nanoseconds.map { Double($0) }
        self.points = stages.stages.map { stage in
            let first = Int(stage.startNanoseconds / width)
            let last = Int((stage.startNanoseconds + stage.durationNanoseconds) / width)
            var slice = RunIntervals.Slice()
            for index in first..<last {
                if let part = slices[index] { try? slice.add(part) }
            }
            let histogram = slice.steps[.exchange].flatMap { try? RunIntervals.rebuild($0, path: "exchange") }
            let count = histogram.map { UInt64($0.totalCount) } ?? 0
            let seconds = Double(stage.durationNanoseconds) / 1e9
            var point = Point(
                offered: stage.rate,
                throughput: Double(slice.completed) / seconds,
                exchanges: count + slice.errors,
                errors: slice.errors,
                p50: count > 0 ? histogram.map { Double($0.valueAtPercentile(50)) } : nil,
                p99: count > 0 ? histogram.map { Double($0.valueAtPercentile(99)) } : nil,
                sustained: nil,
                draining: nil
            )
            // A closed stage offers clients, not a rate: nothing to be served in time but the bound.
            if let bound = stages.kneeP99Nanoseconds {
                point.sustained =
                    point.errors == 0 && (point.p99 ?? .infinity) <= Double(bound)
                    && (stages.offered == .clients || point.throughput >= Self.servedShare * point.offered)
                point.draining =
                    point.sustained == false && stages.offered == .rate && point.errors == 0
                    && point.throughput >= point.offered
            }
            return point
        }
        self.knee = Self.knee(self.points, bound: self.bound)
    }

    /// The last stage the server kept up with, when the stage after it did not: where stages
    /// stop being sustained for good.
    ///
    /// A stage that missed the bound below a higher one that held it was a passing disturbance
    /// (the machine stalled, a handful of exchanges straddled the stage's end), not the
    /// server's limit: the first crossing put the knee of one run at 0.58× what its server
    /// served, and of the next at 0.94×. So was a stage that missed it while draining (it
    /// served at least its offer): the server had room above that rate, and the latency was
    /// an earlier stage's backlog. A one-second stall of the server at 0.63 of its capacity
    /// left a backlog the next stages drained only slowly, and put the knee there, at 0.62×
    /// what it served (2026-11-28), when it is kept up with until 0.98×. Stages before the
    /// first sustained one do not count either (a first stage slowed by the clients' own
    /// set-up).
    ///
    /// The rate: after a sustained stage, where p99, on a log scale, crosses the bound between
    /// the two stages; after a draining one, what the stage above served (its backlog kept
    /// the server busy throughout, so that is its capacity), within the two stages' rates.
    /// When the stage above failed exchanges, or has no p99, the last kept-up stage's rate.
    static func knee(_ points: [Point], bound: Double?) -> Knee? {
        guard let bound, let first = points.firstIndex(where: { $0.sustained == true }),
            let below = points.lastIndex(where: { $0.sustained == true || $0.draining == true }),
            below >= first, below + 1 < points.count
        else { return nil }
        let above = below + 1
        let low = points[below]
        let high = points[above]
        var rate = low.offered
        if high.errors == 0, low.draining == true {
            rate = min(high.offered, max(low.offered, high.throughput))
        } else if high.errors == 0, let p99Low = low.p99, let p99High = high.p99, p99High > bound, p99Low > 0,
            p99High > p99Low
        {
            let fraction = (log(bound) - log(p99Low)) / (log(p99High) - log(p99Low))
            rate = low.offered + (high.offered - low.offered) * min(1, max(0, fraction))
        }
        return Knee(rate: rate, below: below, above: above)
    }
}
