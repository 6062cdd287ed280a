import Histogram
import LabCore
import Synchronization

/// What a socket server measured: its own steps per group (the suite, or the msg/1 op), how
/// many requests it answered, and why connections ended. For `lab serve --report` and the
/// `serverStats` request.
///
/// Each connection records into its own `ConnectionRecording` (a lock no other connection
/// takes), before writing each answer; a snapshot adds the live connections' records to the
/// ended ones', so a client that has its answer finds it in the next snapshot.
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

        /// Adds `other`'s steps and answer counts (not its connection counts).
        mutating func addAnswers(of other: Snapshot) {
            for (group, steps) in other.steps {
                for (step, histogram) in steps {
                    if var existing = self.steps[group]?[step] {
                        existing.add(histogram)
                        self.steps[group]![step] = existing
                    } else {
                        self.steps[group, default: [:]][step] = histogram
                    }
                }
            }
            for (group, count) in other.exchanges { self.exchanges[group, default: 0] += count }
            for (group, errors) in other.errors {
                for (code, count) in errors { self.errors[group, default: [:]][code, default: 0] += count }
            }
        }
    }

    private struct State {
        var ended = Snapshot()
        var live: [ObjectIdentifier: ConnectionRecording] = [:]
    }

    private let state = Mutex(State())

    /// An empty recording.
    public init() {}

    /// The totals so far, live connections' answers included.
    public func snapshot() -> Snapshot {
        // Under the lock, so a connection that ends meanwhile is counted once (lock order:
        // this one, then the connection's, as in `close`).
        self.state.withLock { state in
            var total = state.ended
            for connection in state.live.values { total.addAnswers(of: connection.snapshot()) }
            return total
        }
    }

    /// Connections open now.
    public var openConnections: Int {
        self.state.withLock { $0.live.count }
    }

    /// A new connection's record.
    func open() -> ConnectionRecording {
        let connection = ConnectionRecording()
        self.state.withLock { $0.live[ObjectIdentifier(connection)] = connection }
        return connection
    }

    /// Moves an ended connection's record into the totals, with why it ended.
    func close(_ connection: ConnectionRecording, code: String) {
        self.state.withLock { state in
            state.live[ObjectIdentifier(connection)] = nil
            state.ended.addAnswers(of: connection.snapshot())
            state.ended.connections += 1
            state.ended.closes[code, default: 0] += 1
        }
    }
}

/// One connection's answers, recorded by its own task; read by snapshots.
final class ConnectionRecording: Sendable {
    private let state = Mutex(ServerRecording.Snapshot())

    /// Records one answer: its steps under `group` if it succeeded, else its error code.
    func record(_ timings: StepTimings, group: String, error: String?) {
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

    func snapshot() -> ServerRecording.Snapshot {
        self.state.withLock { $0 }
    }
}
