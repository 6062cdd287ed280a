import Foundation
import LabCore
import LabWire

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
    private let machine: MachineInfo

    /// A responder for `recording`.
    public init(recording: ServerRecording, provider: ProviderInfo, transport: String, startedAt: Date) {
        self.recording = recording
        self.provider = provider
        self.transport = transport
        self.startedAt = startedAt
        self.machine = MachineInfo.current()
    }

    /// The statistics as they stand.
    public func stats() -> ServerStats {
        let snapshot = self.recording.snapshot()
        let names = Set(snapshot.steps.keys).union(snapshot.exchanges.keys).union(snapshot.errors.keys)
        let groups = names.map { name in
            ServerStats.Group(
                name: name,
                answered: snapshot.exchanges[name] ?? 0,
                errors: snapshot.errors[name] ?? [:],
                steps: (snapshot.steps[name] ?? [:]).sorted { Step.reportOrdering($0.key, $1.key) }.map {
                    ServerStats.StepHistogram(step: $0.key.name, histogram: SparseHistogram($0.value))
                }
            )
        }
        return ServerStats(
            provider: self.provider,
            machine: self.machine,
            transport: self.transport,
            startedAt: self.startedAt,
            groups: groups
        )
    }

    /// Answers with the statistics; the answer's own group is the op's name.
    public func respond<R: StepRecorder>(to body: [UInt8], recorder: inout R) async -> FrameAnswer {
        do {
            return FrameAnswer(body: try ServerStatsMessage.answer(self.stats()), group: ServerStatsMessage.op)
        } catch {
            var failure = PropertyListDictionary()
            failure.set("op", string: ServerStatsMessage.op)
            failure.set("ok", bool: false)
            failure.set("message", string: "\(error)")
            return FrameAnswer(body: (try? failure.encoded()) ?? [], group: ServerStatsMessage.op)
        }
    }
}
