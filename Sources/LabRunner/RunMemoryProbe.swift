import LabCore
import LabMemory
import LabResults
import Synchronization

/// Takes a run's heap snapshots (`RunMemory`): before the clients are prepared, when the last
/// client is connected and set up, and at the end of the measured phase; and, with a server
/// elsewhere, that server's heap (its `serverStats` answer) at the second moment.
final class RunMemoryProbe: Sendable {
    private struct State {
        var before: HeapSnapshot?
        var first: HeapSnapshot?
        var ready: HeapSnapshot?
        var end: HeapSnapshot?
        var iterationsAtReady = 0
        var iterationsAtEnd = 0
        var serverReady: Task<Result<ServerStats, LabError>, Never>?
    }

    /// `jemalloc 5.3.0-…`, or nil when jemalloc is not this process's allocator (no figures then).
    let allocator: String?
    private let state = Mutex(State())

    init() {
        self.allocator = HeapStats.isProcessAllocator ? HeapStats.allocator ?? "jemalloc" : nil
    }

    private func snapshot() -> HeapSnapshot? {
        self.allocator == nil ? nil : HeapStats.current()
    }

    /// Before the clients are prepared.
    func beforeClients() {
        let snapshot = self.snapshot()
        self.state.withLock { $0.before = snapshot }
    }

    /// The first client is connected and set up (the others may be on their way).
    func firstClientReady() {
        let snapshot = self.snapshot()
        self.state.withLock { $0.first = snapshot }
    }

    /// The last client is connected and set up; `iterations` have ended so far. With a server
    /// elsewhere (`remote`), asks it for its heap too, without holding the clients up, once it
    /// counts `connections` open (all the clients', if it said how many it had before).
    func clientsReady(iterations: Int, remote: (any TransportEndpoint)?, connections: Int?) {
        let snapshot = self.snapshot()
        let fetch = remote.map { remote in Task { await ServerSide.fetch(remote, whenOpen: connections) } }
        self.state.withLock {
            $0.ready = snapshot
            $0.iterationsAtReady = iterations
            $0.serverReady = fetch
        }
    }

    /// Every client is done, no connection closed yet; `iterations` have ended in all.
    func measuredEnd(iterations: Int) async {
        let snapshot = self.snapshot()
        // The server's answer must come while the clients' connections are still open.
        _ = await self.state.withLock { $0.serverReady }?.value
        self.state.withLock {
            $0.end = snapshot
            $0.iterationsAtEnd = iterations
        }
    }

    /// The block for the result; `serverBefore` is the server's answer before the run, if asked.
    func block(clients: Int, waited: Bool, serverBefore: Result<ServerStats, LabError>?) async -> RunMemory? {
        let state = self.state.withLock { $0 }
        guard let allocator = self.allocator, let before = state.before else { return nil }
        var memory = RunMemory(
            allocator: allocator,
            beforeClients: before,
            firstClient: state.first,
            clientsReady: state.ready,
            measuredEnd: state.end,
            clients: clients,
            clientsWaited: waited,
            exchanges: max(0, state.iterationsAtEnd - state.iterationsAtReady)
        )
        guard let serverBefore, let fetch = state.serverReady else { return memory }
        do {
            let earlier = try serverBefore.get()
            let later = try await fetch.value.get()
            guard let heapBefore = earlier.heap, let heapReady = later.heap,
                let connectionsBefore = earlier.openConnections, let connectionsReady = later.openConnections
            else {
                memory.serverNote =
                    "not reported: the server does not measure its heap (an older lab, or not on jemalloc)"
                return memory
            }
            memory.server = ServerMemory(
                before: heapBefore,
                connectionsBefore: connectionsBefore,
                ready: heapReady,
                connectionsReady: connectionsReady
            )
        } catch {
            memory.serverNote = "not reported: \(error.message)"
        }
        return memory
    }
}
