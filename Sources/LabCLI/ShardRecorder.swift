import Dispatch
import Foundation
import LabCore
import LabResults
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A shard's `shard.json` (`ShardRecord`), kept by `lab run --shard`: `running` once its
/// folder is accepted, then how the run ended, written once. SIGTERM and SIGINT (a
/// scheduler's cancel or time limit) end it as `stopped` and the process with 128 + the
/// signal's number; SIGKILL leaves `running`, which `lab merge` reads as a shard that did
/// not finish.
final class ShardRecorder: Sendable {
    private let url: URL
    /// The record, and whether it has ended (then it is written no more).
    private let state: Mutex<(record: ShardRecord, ended: Bool)>
    /// The signal sources, kept for the process's life.
    private nonisolated(unsafe) static var sources: [any DispatchSourceSignal] = []

    /// Writes `running` into `folder` and lists shard.json among the run's files there.
    init(shard: String, runId: String?, folder: OutputFolder) throws {
        self.url = folder.url.appendingPathComponent(ShardRecord.fileName)
        let record = ShardRecord(
            shard: shard,
            runId: runId,
            host: ProcessInfo.processInfo.hostName,
            pid: Int(getpid()),
            began: Date()
        )
        self.state = Mutex((record, false))
        try self.write(record)
        try folder.record([self.url])
    }

    /// Records how the run ended, unless it already has (the first end wins: a signal after
    /// the reports were written leaves `finished`).
    func end(_ state: ShardRecord.State, reason: String?, exitCode: Int32) {
        let ended = self.state.withLock { current -> ShardRecord? in
            guard !current.ended else { return nil }
            current = (current.record.ended(state, reason: reason, exitCode: Int(exitCode)), true)
            return current.record
        }
        // The run's own error is what matters now: a record that cannot be written is said once.
        if let ended, (try? self.write(ended)) == nil {
            FileHandleOutput.standardError("lab run: cannot write \(self.url.path)\n")
        }
    }

    /// From now on, SIGTERM and SIGINT end the record as `stopped` and the process with
    /// 128 + the signal's number.
    func stopOnSignals() {
        for (number, name) in [(SIGTERM, "SIGTERM"), (SIGINT, "SIGINT")] {
            // The default action would end the process before the handler ran.
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [self] in
                self.end(.stopped, reason: "stopped by \(name)", exitCode: 128 + number)
                exit(128 + number)
            }
            source.resume()
            Self.sources.append(source)
        }
    }

    private func write(_ record: ShardRecord) throws {
        do {
            try record.jsonData().write(to: self.url, options: .atomic)
        } catch {
            throw LabError(.storage, "Cannot write \(self.url.path): \(FileReason.describe(error))")
        }
    }
}
