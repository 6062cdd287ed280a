public import Foundation
public import LabCore
public import LabResults
public import LabTransports
import LabWire
import Synchronization

/// Answers the lab's `serverStats` request (`ServerStatsMessage`) from a server's recording:
/// what the server measured of its own work since it started.
public struct ServerStatsResponder: FrameHandler {
    /// The totals it reports.
    public let recording: ServerRecording
    /// The server's provider.
    public let provider: ProviderInfo
    /// The server's transport, e.g. `tcp`.
    public let transport: String
    /// When the server started.
    public let startedAt: Date
    /// The server process's heap now, or nil where it is not measured.
    public let heap: @Sendable () -> HeapSnapshot?
    /// The heap with the most connections open, over every answer and `heap` reading so far.
    public let busiest = BusiestHeap()
    /// The largest answer the server's framing may send (its `maxFrameBytes`).
    public let maxAnswerBytes: Int
    private let machine: MachineInfo

    /// A responder for `recording`; `heap` reads the process's heap (e.g. `HeapStats.current`).
    public init(
        recording: ServerRecording,
        provider: ProviderInfo,
        transport: String,
        startedAt: Date,
        maxAnswerBytes: Int = TransportOptions().maxFrameBytes,
        heap: @escaping @Sendable () -> HeapSnapshot? = { nil }
    ) {
        self.maxAnswerBytes = maxAnswerBytes
        self.recording = recording
        self.provider = provider
        self.transport = transport
        self.startedAt = startedAt
        self.heap = heap
        self.machine = MachineInfo.current()
    }

    /// Reads the heap and the open connections, and keeps the reading if it has the most
    /// connections so far.
    @discardableResult
    public func sampleHeap() -> (heap: HeapSnapshot, connections: Int)? {
        let connections = self.recording.openConnections
        guard let heap = self.heap() else { return nil }
        self.busiest.note(heap, connections: connections)
        return (heap, connections)
    }

    /// The statistics as they stand: every group's, or `group`'s alone.
    public func stats(group: String? = nil) -> ServerStats {
        let snapshot = self.recording.snapshot()
        let names = Set(snapshot.steps.keys).union(snapshot.exchanges.keys).union(snapshot.errors.keys)
            .filter { group == nil || $0 == group }
        let groups = names.map { name in
            ServerStats.Group(
                name: name,
                answered: snapshot.exchanges[name] ?? 0,
                errors: snapshot.errors[name] ?? [:],
                steps: (snapshot.steps[name] ?? [:]).sorted { Step.reportOrdering($0.key, $1.key) }.map {
                    ServerStats.StepHistogram(step: $0.key.name, histogram: SparseHistogram($0.value))
                },
                packets: snapshot.packets[name].map { Dictionary(uniqueKeysWithValues: $0.map { ($0.key.name, $0.value) }) }
            )
        }
        var stats = ServerStats(
            provider: self.provider,
            machine: self.machine,
            transport: self.transport,
            startedAt: self.startedAt,
            groups: groups
        )
        if let sample = self.sampleHeap() {
            stats.heap = sample.heap
            stats.openConnections = sample.connections
        }
        stats.cpu = ProcessCPU.now()
        stats.clockNanoseconds = Stopwatch.now()
        return stats
    }

    /// Answers with the statistics (of the group the request names, if any); the answer's
    /// own group is the op's name. An answer over the frame limit is refused in a small one,
    /// on an open connection: a server that has served a lot has large histograms.
    public func respond<R: StepRecorder>(to body: [UInt8], recorder: inout R) async -> FrameAnswer {
        do {
            let group = try PropertyListDictionary(decoding: body).optionalString("group")
            let answer = try ServerStatsMessage.answer(self.stats(group: group))
            guard answer.count <= self.maxAnswerBytes else {
                return Self.failure(
                    "tooLarge",
                    "the statistics take \(answer.count) bytes, over this server's frame limit of \(self.maxAnswerBytes); "
                        + "ask for one group, or start the server with a larger --max-frame-bytes"
                )
            }
            return FrameAnswer(body: answer, group: ServerStatsMessage.op)
        } catch {
            return Self.failure("badRequest", "\(error)")
        }
    }

    private static func failure(_ code: String, _ message: String) -> FrameAnswer {
        var failure = PropertyListDictionary()
        failure.set("op", string: ServerStatsMessage.op)
        failure.set("ok", bool: false)
        failure.set("error", string: code)
        failure.set("message", string: message)
        return FrameAnswer(body: (try? failure.encoded()) ?? [], group: ServerStatsMessage.op)
    }
}

/// The heap reading taken with the most connections open (the first such, on a tie).
public final class BusiestHeap: Sendable {
    private let state = Mutex<(heap: HeapSnapshot, connections: Int)?>(nil)

    /// An empty record.
    public init() {}

    /// Keeps `heap` if `connections` is more than any reading so far had.
    public func note(_ heap: HeapSnapshot, connections: Int) {
        self.state.withLock { state in
            if state == nil || connections > state!.connections { state = (heap, connections) }
        }
    }

    /// The reading with the most connections, if any.
    public var reading: (heap: HeapSnapshot, connections: Int)? {
        self.state.withLock { $0 }
    }
}
