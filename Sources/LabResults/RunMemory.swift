import LabCore

/// The heap of a run's process at three moments, and of a server elsewhere with the clients
/// connected: what a simulated client costs to keep, and what an exchange allocates.
///
/// Figures are jemalloc's (`HeapSnapshot`): live bytes (`stats.allocated`) and the count of
/// allocations made. A run's process holds the lab's own server too when it runs one, so its
/// per-client figure then includes the server's side of each connection.
public struct RunMemory: Codable, Sendable, Equatable {
    /// The allocator and its version, e.g. `jemalloc 5.3.0-0-g54eaed1`.
    public var allocator: String
    /// Before the clients were prepared (keys made, recorders set up).
    public var beforeClients: HeapSnapshot
    /// When the first client had connected and set itself up, before any other began to:
    /// what the first of anything costs once (providers' tables, flows' caches, the
    /// allocator's first slabs) is in it; nil in results written before runs took it.
    public var firstClient: HeapSnapshot?
    /// When the last client had connected and set itself up; nil if the run never got there.
    public var clientsReady: HeapSnapshot?
    /// At the end of the measured phase: every client done, no connection closed yet.
    public var measuredEnd: HeapSnapshot?
    /// The clients counted (this process's).
    public var clients: Int
    /// Whether the clients waited for each other at `clientsReady` (the idle model); otherwise
    /// the first clients were already running iterations then.
    public var clientsWaited: Bool
    /// Iterations (warm-up included) that ended between `clientsReady` and `measuredEnd`.
    public var exchanges: Int
    /// A server elsewhere's heap, from its `serverStats` answers; nil when none was asked.
    public var server: ServerMemory?
    /// Why the server's heap is not reported, when it was asked and did not say.
    public var serverNote: String?

    /// A block given directly.
    public init(
        allocator: String,
        beforeClients: HeapSnapshot,
        firstClient: HeapSnapshot? = nil,
        clientsReady: HeapSnapshot?,
        measuredEnd: HeapSnapshot?,
        clients: Int,
        clientsWaited: Bool,
        exchanges: Int,
        server: ServerMemory? = nil,
        serverNote: String? = nil
    ) {
        self.allocator = allocator
        self.beforeClients = beforeClients
        self.firstClient = firstClient
        self.clientsReady = clientsReady
        self.measuredEnd = measuredEnd
        self.clients = clients
        self.clientsWaited = clientsWaited
        self.exchanges = exchanges
        self.server = server
        self.serverNote = serverNote
    }

    /// Live heap growth per client, in bytes, beyond what the first client cost: from the
    /// first client ready to all of them ready, over the others. Nil with one client (no
    /// other to divide by), and in results without `firstClient` the growth from before the
    /// clients over all of them.
    public var heapPerClient: Double? {
        guard let first = self.firstClient else {
            return self.clientsReady?.growth(since: self.beforeClients, per: self.clients)
        }
        guard self.clients > 1 else { return nil }
        return self.clientsReady?.growth(since: first, per: self.clients - 1)
    }

    /// What the first client cost beyond its share: the fixed set-up that `heapPerClient`
    /// leaves out, in bytes; nil without `firstClient`.
    public var heapFixedCost: Double? {
        guard let firstGrowth = self.firstClient?.growth(since: self.beforeClients, per: 1) else { return nil }
        return max(0, firstGrowth - (self.heapPerClient ?? 0))
    }

    /// Allocations made during the measured phase, per exchange.
    public var allocationsPerExchange: Double? {
        guard let ready = self.clientsReady, let end = self.measuredEnd else { return nil }
        return end.allocations(since: ready, per: self.exchanges)
    }

    /// Live heap growth during the measured phase, per exchange, in bytes (what stays allocated:
    /// recorders' samples, caches, leaks).
    public var heapGrowthPerExchange: Double? {
        guard let ready = self.clientsReady, let end = self.measuredEnd else { return nil }
        return end.growth(since: ready, per: self.exchanges)
    }

    /// Several shards' blocks as one: snapshots, clients and exchanges add up (the processes'
    /// heaps together), so the per-client and per-exchange figures are the shards' pooled
    /// ones; the per-client figure then includes each shard's fixed set-up. A server's heap is left out (each shard's covers the others' connections too).
    public static func merged(_ blocks: [RunMemory]) -> RunMemory? {
        guard let first = blocks.first else { return nil }
        guard blocks.count > 1 else { return first }
        func sum(_ snapshots: [HeapSnapshot?]) -> HeapSnapshot? {
            let present = snapshots.compactMap { $0 }
            guard present.count == snapshots.count else { return nil }
            return present.dropFirst().reduce(present[0]) { total, next in
                HeapSnapshot(
                    allocated: total.allocated &+ next.allocated,
                    active: total.active &+ next.active,
                    resident: total.resident &+ next.resident,
                    allocations: total.allocations &+ next.allocations
                )
            }
        }
        return RunMemory(
            allocator: first.allocator,
            beforeClients: sum(blocks.map(\.beforeClients))!,
            // Each shard's first client carried its fixed set-up: pooled, the growth from
            // before the clients over all of them (the shards' set-ups included).
            firstClient: nil,
            clientsReady: sum(blocks.map(\.clientsReady)),
            measuredEnd: sum(blocks.map(\.measuredEnd)),
            clients: blocks.reduce(0) { $0 + $1.clients },
            clientsWaited: blocks.allSatisfy(\.clientsWaited),
            exchanges: blocks.reduce(0) { $0 + $1.exchanges },
            server: nil,
            serverNote: blocks.contains { $0.server != nil }
                ? "left out of the merge: each shard's covers the others' connections too" : nil
        )
    }
}

/// A server's heap as its `serverStats` answers gave it: before the clients and with all of
/// them connected, each with the connections it had open.
public struct ServerMemory: Codable, Sendable, Equatable {
    /// The server's heap before the clients were prepared.
    public var before: HeapSnapshot
    /// Connections open then (the statistics request's own included).
    public var connectionsBefore: Int
    /// The server's heap with every client connected.
    public var ready: HeapSnapshot
    /// Connections open then.
    public var connectionsReady: Int

    /// A block given directly.
    public init(before: HeapSnapshot, connectionsBefore: Int, ready: HeapSnapshot, connectionsReady: Int) {
        self.before = before
        self.connectionsBefore = connectionsBefore
        self.ready = ready
        self.connectionsReady = connectionsReady
    }

    /// Connections the clients added.
    public var connections: Int { self.connectionsReady - self.connectionsBefore }

    /// Live heap growth per connection the clients added, in bytes.
    public var heapPerConnection: Double? { self.ready.growth(since: self.before, per: self.connections) }
}
