import Histogram
import LabCore
import Synchronization

/// What a socket server measured: its own steps per group (the suite), how many exchanges it
/// answered, and why connections ended. For `lab serve --report`.
///
/// Each connection records into its own `ConnectionRecording` and merges it here when it
/// ends, so answering takes no lock.
public final class ServerRecording: Sendable {
    /// A copy of the totals so far.
    public struct Snapshot: Sendable {
        /// Per group (e.g. suite), the server's step durations in nanoseconds.
        public var steps: [String: [Step: Histogram<UInt64>]] = [:]
        /// Per group, the requests answered without error.
        public var exchanges: [String: UInt64] = [:]
        /// Per group, the requests answered with an error.
        public var errors: [String: [String: UInt64]] = [:]
        /// Why connections ended, by reason code (`peer-closed`, `frameTooLarge`, `timedOut`, …).
        public var closes: [String: UInt64] = [:]
        /// Connections accepted.
        public var connections: UInt64 = 0
    }

    private let state = Mutex(Snapshot())

    /// An empty recording.
    public init() {}

    /// The totals so far.
    public func snapshot() -> Snapshot {
        self.state.withLock { $0 }
    }

    func merge(_ connection: ConnectionRecording) {
        self.state.withLock { state in
            state.connections += 1
            state.closes[connection.closeCode, default: 0] += 1
            for (group, steps) in connection.steps {
                for (step, histogram) in steps {
                    if var existing = state.steps[group]?[step] {
                        existing.add(histogram)
                        state.steps[group]![step] = existing
                    } else {
                        state.steps[group, default: [:]][step] = histogram
                    }
                }
            }
            for (group, count) in connection.exchanges { state.exchanges[group, default: 0] += count }
            for (group, errors) in connection.errors {
                for (code, count) in errors { state.errors[group, default: [:]][code, default: 0] += count }
            }
        }
    }
}

/// One connection's share of a `ServerRecording`, owned by its task.
struct ConnectionRecording {
    var steps: [String: [Step: Histogram<UInt64>]] = [:]
    var exchanges: [String: UInt64] = [:]
    var errors: [String: [String: UInt64]] = [:]
    var closeCode = "peer-closed"

    mutating func record(_ timings: StepTimings, group: String, error: String?) {
        if let error {
            self.errors[group, default: [:]][error, default: 0] += 1
            return
        }
        self.exchanges[group, default: 0] += 1
        for (step, nanoseconds) in timings.entries {
            self.steps[group, default: [:]][step, default: Histogram<UInt64>(numberOfSignificantValueDigits: .three)]
                .record(nanoseconds)
        }
    }
}
