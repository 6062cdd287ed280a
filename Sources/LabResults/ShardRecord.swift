public import Foundation
import LabCore

/// What a shard (`lab run --shard K/N`) says of itself in its folder's `shard.json`: written
/// as soon as the folder is accepted (`running`), and again when the run ends, so that
/// `lab merge` can tell a shard that failed, was stopped or was killed from one that was
/// never given.
public struct ShardRecord: Sendable, Codable, Equatable {
    /// The file's name in the shard's folder.
    public static let fileName = "shard.json"
    /// The format tag this version writes and reads.
    public static let currentFormat = "crypto-lab/shard/1"

    /// Where the shard's run is.
    public enum State: String, Sendable, Codable {
        /// Under way (or killed without a word: SIGKILL leaves it so).
        case running
        /// Its reports are written.
        case finished
        /// An error ended it.
        case failed
        /// SIGTERM or SIGINT ended it.
        case stopped
    }

    /// `crypto-lab/shard/1`.
    public package(set) var format: String
    /// `K/N`.
    public package(set) var shard: String
    /// The run's id (`--run-id`), if given.
    public package(set) var runId: String?
    /// The host it ran on, as `metadata.machine.hostname` names it.
    public package(set) var host: String
    /// Its process id.
    public package(set) var pid: Int
    /// When the process accepted its folder.
    public package(set) var began: Date
    /// Running, finished, failed or stopped.
    public package(set) var state: State
    /// Why it failed or stopped, in one line; nil while running and once finished.
    public package(set) var reason: String?
    /// The exit code `lab run` returned; nil while running.
    public package(set) var exitCode: Int?

    /// A shard that has just begun.
    public init(shard: String, runId: String?, host: String, pid: Int, began: Date) {
        self.format = Self.currentFormat
        self.shard = shard
        self.runId = runId
        self.host = host
        self.pid = pid
        self.began = began
        self.state = .running
    }

    /// This record, ended: `state` with `reason` (dropped for `finished`) and `exitCode`.
    public func ended(_ state: State, reason: String?, exitCode: Int) -> ShardRecord {
        var record = self
        record.state = state
        record.reason = state == .finished ? nil : reason
        record.exitCode = exitCode
        return record
    }

    /// The record as `shard.json` holds it: pretty-printed, keys sorted, dates as results.json's.
    public func jsonData() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = RunResult.dateEncoding
        return try encoder.encode(self)
    }

    /// Reads the `shard.json` at `url`; throws a `LabError` (`invalidScenario`) naming it for a
    /// file that is not one.
    public static func read(from url: URL) throws -> ShardRecord {
        let data = try InputFile.read(url.path)
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = RunResult.dateDecoding
        let record: ShardRecord
        do {
            record = try decoder.decode(ShardRecord.self, from: data)
        } catch {
            throw LabError(
                .invalidScenario,
                "\(url.path) is not a shard record (shard.json)",
                cause: UnderlyingError(describing: error)
            )
        }
        guard record.format == Self.currentFormat else {
            throw LabError(
                .invalidScenario,
                "\(url.path): unknown shard record format '\(record.format)'; this version of lab reads '\(Self.currentFormat)'"
            )
        }
        return record
    }

    /// The shard as a failed one of a merge, given whether its folder holds a results.json;
    /// nil for a shard that finished and left its results.
    public func failure(hasResults: Bool) -> FailedShard? {
        let reason: String
        switch self.state {
        case .finished:
            guard !hasResults else { return nil }
            reason = "finished, but its folder holds no results.json"
        case .failed, .stopped:
            reason = self.reason ?? "\(self.state.rawValue) (exit code \(self.exitCode.map(String.init) ?? "unknown"))"
        case .running:
            let what = hasResults ? "its shard.json still says running" : "no results.json"
            reason = "did not finish: \(what) (began \(RunResult.iso8601(self.began)), pid \(self.pid); killed?)"
        }
        return FailedShard(shard: self.shard, host: self.host, reason: reason)
    }
}

/// A shard given to `lab merge` that did not finish (`ShardRecord.failure`): the merge is
/// not the whole run, and says so.
public struct FailedShard: Sendable, Codable, Equatable, CustomStringConvertible {
    /// `K/N`.
    public package(set) var shard: String
    /// The host it ran on.
    public package(set) var host: String
    /// Why it did not finish, in one line.
    public package(set) var reason: String

    /// A failed shard.
    public init(shard: String, host: String, reason: String) {
        self.shard = shard
        self.host = host
        self.reason = reason
    }

    /// `shard 2/2 on lab-b: did not finish: …`.
    public var description: String { "shard \(self.shard) on \(self.host): \(self.reason)" }
}
