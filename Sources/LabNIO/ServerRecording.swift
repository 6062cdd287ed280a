import Histogram
import LabCore
import Synchronization

/// What a socket server measured: its own steps per group (the suite, or the msg/1 op), how
/// many requests it answered, and why connections ended. For `lab serve --report` and the
/// `serverStats` request.
///
/// Each answer is recorded before it is written, so a client that has its answer finds it in
/// the next snapshot; the lock is held for a few histogram updates per request.
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
        /// Connections that have ended.
        public var connections: UInt64 = 0
    }

    private let state = Mutex(Snapshot())

    /// An empty recording.
    public init() {}

    /// The totals so far.
    public func snapshot() -> Snapshot {
        self.state.withLock { $0 }
    }

    /// Records one answer: its steps under `group` if it succeeded, else its error code.
    public func record(_ timings: StepTimings, group: String, error: String?) {
        self.state.withLock { state in
            if let error {
                state.errors[group, default: [:]][error, default: 0] += 1
                return
            }
            state.exchanges[group, default: 0] += 1
            for (step, nanoseconds) in timings.entries {
                state.steps[group, default: [:]][
                    step,
                    default: Histogram<UInt64>(numberOfSignificantValueDigits: .three)
                ]
                .record(nanoseconds)
            }
        }
    }

    /// Records that a connection ended, and why.
    func closed(_ code: String) {
        self.state.withLock { state in
            state.connections += 1
            state.closes[code, default: 0] += 1
        }
    }
}
