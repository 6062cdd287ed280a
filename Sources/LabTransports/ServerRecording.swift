public import Histogram
public import LabCore
public import NIOCore
import Synchronization
import LabResults

/// What a socket server measured: its own steps per group (the suite, or the msg/1 op), how
/// many requests it answered, and why connections ended. For `lab serve --report` and the
/// `serverStats` request.
///
/// Answers are recorded into as many shards as cores, up to 8 (connections take them in turn), each
/// under its own lock, and a connection always records into the same shard: connections
/// rarely contend, and the
/// memory is the shards' histograms whatever the number of connections. (A histogram per step
/// per connection, as this once kept, cost about 400 KiB for each connection that had been
/// answered: 435 MiB for 1,000 clients, found by the hostile-load test.) A snapshot merges the
/// shards, so a client that has its answer finds it in the next snapshot.
public final class ServerRecording: ServerRecorder {
    /// A copy of the totals so far.
    public struct Snapshot: Sendable {
        /// Per group (e.g. suite), the server's step durations in nanoseconds.
        public var steps: [String: [Step: Histogram<UInt64>]] = [:]
        /// Per group, the requests answered without error.
        public var exchanges: [String: UInt64] = [:]
        /// Per group, the requests answered with an error: cx/1's error frames and msg/1's
        /// answers with `ok` false, by code.
        public var errors: [String: [String: UInt64]] = [:]
        /// Why connections ended, by reason code (`peer-closed`, `frameTooLarge`, `timedOut`, …).
        public var closes: [String: UInt64] = [:]
        /// Connections that have ended.
        public var connections: UInt64 = 0
        /// Per group, what TCP did for its answers (`--packets`), by step (`Step.answer`).
        public var packets: [String: [Step: StepPackets]] = [:]

        /// Adds `other`'s steps and answer counts (not its connection counts).
        mutating func addAnswers(of other: Snapshot) {
            for (group, steps) in other.steps {
                for (step, histogram) in steps {
                    if var existing = self.steps[group]?[step] {
                        existing.addWidening(histogram)
                        self.steps[group]![step] = existing
                    } else {
                        self.steps[group, default: [:]][step] = histogram
                    }
                }
            }
            for (group, count) in other.exchanges { self.exchanges[group, default: 0] += count }
            for (group, steps) in other.packets {
                for (step, packets) in steps { self.packets[group, default: [:]][step, default: StepPackets()].add(packets) }
            }
            for (group, errors) in other.errors {
                for (code, count) in errors { self.errors[group, default: [:]][code, default: 0] += count }
            }
        }

        /// Records one answer: its steps under `group`, and its error code if it failed.
        mutating func record(_ timings: StepTimings, group: String, error: String?) {
            if let error {
                self.errors[group, default: [:]][error, default: 0] += 1
            } else {
                self.exchanges[group, default: 0] += 1
            }
            for (step, sample) in timings.samples {
                self.steps[group, default: [:]][
                    step,
                    default: Histograms.empty(digits: .three, spanning: 2)
                ]
                .recordWidening(sample.nanoseconds)
            }
        }
    }

    /// Connections' ends: counts by reason, and who waits for them.
    private struct Ends {
        var closes: [String: UInt64] = [:]
        var connections: UInt64 = 0
        var open = 0
        var opened: UInt64 = 0
        var waiters: [Int: Waiter] = [:]
        var nextWaiter = 0

        /// Closes counted under any of `codes`.
        func count(_ codes: Set<String>) -> UInt64 {
            codes.reduce(0) { $0 + (self.closes[$1] ?? 0) }
        }

        /// Removes and returns the waiters whose count has been reached.
        mutating func takeSatisfied() -> [CheckedContinuation<Void, Never>] {
            let done = self.waiters.filter { self.count($0.value.codes) >= $0.value.count }
            for key in done.keys { self.waiters[key] = nil }
            return done.values.map(\.continuation)
        }
    }

    /// A task waiting until `count` connections have closed under `codes`.
    private struct Waiter {
        var codes: Set<String>
        var count: UInt64
        var continuation: CheckedContinuation<Void, Never>
    }

    /// One lock's share of the answers.
    private final class Shard: Sendable {
        let totals = Mutex(Snapshot())
    }

    private let shards: [Shard]
    private let ends = Mutex(Ends())

    /// An empty recording with `shards` shards (default: one per core, at most 8: each shard
    /// holds a set of histograms per group, about 400 KiB, and a lock is held for tens of
    /// nanoseconds per answer, so more shards would cost memory on a large host for little).
    public init(shards: Int = min(System.coreCount, 8)) {
        self.shards = (0..<max(1, shards)).map { _ in Shard() }
    }

    /// The totals so far, live connections' answers included.
    public func snapshot() -> Snapshot {
        var total = Snapshot()
        for shard in self.shards { total.addAnswers(of: shard.totals.withLock { $0 }) }
        let ends = self.ends.withLock { $0 }
        total.closes = ends.closes
        total.connections = ends.connections
        return total
    }

    /// Connections open now.
    public var openConnections: Int {
        self.ends.withLock { $0.open }
    }

    /// A new connection's record.
    public func opened() -> any ConnectionRecorder {
        let index = self.ends.withLock { ends in
            ends.open += 1
            ends.opened &+= 1
            return Int(ends.opened % UInt64(self.shards.count))
        }
        return ConnectionRecording(recording: self, shard: index)
    }

    /// Counts a connection refused at once (`busy`): closed, never opened.
    public func refused(code: String) {
        let satisfied = self.ends.withLock { ends in
            ends.connections += 1
            ends.closes[code, default: 0] += 1
            return ends.takeSatisfied()
        }
        for waiter in satisfied { waiter.resume() }
    }

    /// Counts an ended connection, with why it ended.
    func close(_ connection: ConnectionRecording, code: String) {
        let satisfied = self.ends.withLock { ends in
            ends.open -= 1
            ends.connections += 1
            ends.closes[code, default: 0] += 1
            return ends.takeSatisfied()
        }
        for waiter in satisfied { waiter.resume() }
    }

    /// Returns once at least `count` connections have ended with any of the close reasons in
    /// `codes` (at once if they already have), or when the calling task is cancelled: the
    /// event a test or an operator's tool awaits instead of polling `snapshot()`.
    public func closes(_ codes: Set<String>, reaching count: UInt64) async {
        let id = self.ends.withLock { ends in
            ends.nextWaiter += 1
            return ends.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = self.ends.withLock { ends in
                    if Task.isCancelled || ends.count(codes) >= count { return true }
                    ends.waiters[id] = Waiter(codes: codes, count: count, continuation: continuation)
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            let waiter = self.ends.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.continuation.resume()
        }
    }

    fileprivate func record(_ timings: StepTimings, group: String, error: String?, shard: Int) {
        self.shards[shard].totals.withLock { $0.record(timings, group: group, error: error) }
    }

    fileprivate func record(_ packets: StepPackets, step: Step, group: String, shard: Int) {
        self.shards[shard].totals.withLock { $0.packets[group, default: [:]][step, default: StepPackets()].add(packets) }
    }
}

/// One connection's handle on the recording: the shard its answers go to.
struct ConnectionRecording: ConnectionRecorder {
    let recording: ServerRecording
    let shard: Int

    /// Records one answer: its steps under `group` if it succeeded, else its error code.
    func record(_ timings: StepTimings, group: String, error: String?) {
        self.recording.record(timings, group: group, error: error, shard: self.shard)
    }

    /// Records what TCP did for one answer.
    func packets(_ packets: StepPackets, step: Step, group: String) {
        self.recording.record(packets, step: step, group: group, shard: self.shard)
    }

    /// Counts the connection's end.
    func closed(code: String) {
        self.recording.close(self, code: code)
    }
}
