import LabCore
import LabScenario

extension Runner {
    /// The moments the clients pass: the first connected and set up (alone: the others open
    /// only after it, so the heap then holds what the first of everything costs and nothing
    /// of another client); all connected and set up; all done.
    struct Checkpoints: Sendable {
        var firstOpened: ClientCheckpoint
        var ready: ClientCheckpoint
        var end: ClientCheckpoint
    }

    /// The run's checkpoints, each taking its heap snapshot when the last client arrives;
    /// `remote` is a server elsewhere to ask for its heap with the clients connected, once it
    /// counts `remoteConnections` open.
    func checkpoints(
        clients: Int,
        memory: RunMemoryProbe,
        remote: (any TransportEndpoint)?,
        remoteConnections: Int?
    ) -> Checkpoints {
        let progress = self.progress
        return Checkpoints(
            firstOpened: ClientCheckpoint(parties: 1) { memory.firstClientReady() },
            ready: ClientCheckpoint(parties: clients) {
                memory.clientsReady(iterations: progress.completed, remote: remote, connections: remoteConnections)
            },
            end: ClientCheckpoint(parties: clients) {
                await memory.measuredEnd(iterations: progress.completed)
            }
        )
    }

    /// Arrives at `checkpoint`; a cancelled run stops waiting there.
    static func arrive(at checkpoint: ClientCheckpoint, waiting: Bool) async {
        await withTaskCancellationHandler {
            await checkpoint.arrive(waiting: waiting)
        } onCancel: {
            Task { await checkpoint.cancel() }
        }
    }

    /// Waits until `checkpoint` has passed; a cancelled run stops waiting there.
    static func wait(for checkpoint: ClientCheckpoint) async {
        await withTaskCancellationHandler {
            await checkpoint.passed()
        } onCancel: {
            Task { await checkpoint.cancel() }
        }
    }

    /// Files this process opens for a run: a socket per client per flow, another per accepted
    /// connection when the lab runs a socket server itself, and a margin for everything else
    /// (libraries, listeners, the report files, the statistics requests).
    static func openFilesNeeded(_ plan: Plan, clients: Int, remote: Bool) -> UInt64 {
        guard plan.plugins.transports.type(named: plan.scenario.server.transport)?.usesNetwork == true else { return 0 }
        let connections = UInt64(clients) * UInt64(max(1, plan.flows.count))
        return connections * (remote ? 1 : 2) + OpenFileLimit.margin
    }
}
