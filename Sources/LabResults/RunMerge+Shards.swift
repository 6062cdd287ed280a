public import Foundation
import LabCore

/// One merged shard's measured window on the wall clock (`metadata.shardWindows`).
public struct ShardWindow: Sendable, Codable, Equatable {
    /// `K/N`.
    public package(set) var shard: String
    /// The host it ran on.
    public package(set) var host: String
    /// When its clients began; nil for a shard from before runs recorded it.
    public package(set) var clientsStartedAt: Date?
    /// The start of its measured window.
    public package(set) var measuredFrom: Date
    /// The end of its measured window.
    public package(set) var measuredTo: Date
    /// Its measured exchanges (the report's iterations done).
    public package(set) var iterations: Int

    /// A window.
    public init(
        shard: String,
        host: String,
        clientsStartedAt: Date?,
        measuredFrom: Date,
        measuredTo: Date,
        iterations: Int
    ) {
        self.shard = shard
        self.host = host
        self.clientsStartedAt = clientsStartedAt
        self.measuredFrom = measuredFrom
        self.measuredTo = measuredTo
        self.iterations = iterations
    }
}

extension RunMerge {
    /// A time span on the wall clock, in seconds since 1970.
    public typealias Window = (start: Double, end: Double)

    /// How well `windows` overlap: the length of their common part ÷ the length of their
    /// union; 0 when they have no common part (or no length at all).
    public static func overlap(_ windows: [Window]) -> Double {
        guard let start = windows.map(\.start).max(), let end = windows.map(\.end).min() else { return 0 }
        let union = Self.unionLength(windows)
        return end > start && union > 0 ? (end - start) / union : 0
    }

    /// The length of the union of `windows`, in seconds.
    public static func unionLength(_ windows: [Window]) -> Double {
        var union = 0.0
        var current: Window? = nil
        for window in windows.sorted(by: { $0.start < $1.start }) {
            if let open = current, window.start <= open.end {
                current = (open.start, max(open.end, window.end))
            } else {
                if let open = current { union += open.end - open.start }
                current = window
            }
        }
        if let open = current { union += open.end - open.start }
        return union
    }

    /// A run's measured window on the wall clock (a run from before `measuredFrom` was
    /// recorded: the end of its whole span, back by its measured time).
    static func window(_ run: RunResult) -> Window {
        let measured = Double(run.measuredNanoseconds) / 1e9
        if let from = run.metadata.measuredFrom?.timeIntervalSince1970 { return (from, from + measured) }
        let end = run.metadata.startedAt.timeIntervalSince1970 + Double(run.totalNanoseconds) / 1e9
        return (end - measured, end)
    }

    /// Each shard's window, in shard order (`K` of `K/N`); nil unless every run is a shard.
    static func shardWindows(_ runs: [RunResult]) -> [ShardWindow]? {
        guard !runs.isEmpty, runs.allSatisfy({ $0.metadata.shard != nil }) else { return nil }
        func index(_ shard: String) -> Int { Int(shard.split(separator: "/").first ?? "") ?? 0 }
        return runs.map { run in
            let window = Self.window(run)
            return ShardWindow(
                shard: run.metadata.shard!,
                host: run.metadata.machine.hostname,
                clientsStartedAt: run.metadata.clientsStartedAt,
                measuredFrom: Date(timeIntervalSince1970: window.start),
                measuredTo: Date(timeIntervalSince1970: window.end),
                iterations: run.completedIterations
            )
        }.sorted { index($0.shard) < index($1.shard) }
    }

    /// One argument of `lab merge`: a shard's (or a whole run's) results, or a shard that
    /// did not finish.
    public enum Input: Sendable {
        /// The results.json to merge.
        case results(RunResult)
        /// A shard whose shard.json says it did not finish, or which left no results.json.
        case failed(FailedShard)

        /// Reads the input at `url` (a folder's results.json, maybe absent, or its shard.json)
        /// and the shard.json beside it; a results.json of another name is read alone. A
        /// folder with neither is an error, as a results.json that does not read is.
        public static func read(_ url: URL) throws -> Input {
            let folder = url.deletingLastPathComponent()
            let named = url.lastPathComponent == ShardRecord.fileName
            let url = named ? folder.appendingPathComponent("results.json") : url
            let record = folder.appendingPathComponent(ShardRecord.fileName)
            guard url.lastPathComponent == "results.json" else { return .results(try RunResult.read(from: url)) }
            let hasResults = FileManager.default.fileExists(atPath: url.path)
            guard FileManager.default.fileExists(atPath: record.path) else {
                return .results(try RunResult.read(from: url))
            }
            if let failure = try ShardRecord.read(from: record).failure(hasResults: hasResults) {
                return .failed(failure)
            }
            return .results(try RunResult.read(from: url))
        }
    }
}
