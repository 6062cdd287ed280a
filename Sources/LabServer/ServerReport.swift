package import Foundation
package import LabCore
import LabKit
import LabMemory
package import LabResults
import LabRunner
package import LabTransports

/// Turns what `lab serve` measured into a `RunResult`, so the usual reporters write it.
///
/// One group per suite with the server's own steps; a `connections` group counts connections
/// (its iterations) and how those that did not end normally ended (its errors).
package enum ServerReport {
    /// `snapshot` without the lab's own statistics requests, which are not exchanges.
    package static func exchanges(_ snapshot: ServerRecording.Snapshot) -> ServerRecording.Snapshot {
        var snapshot = snapshot
        snapshot.exchanges[ServerStatsMessage.op] = nil
        snapshot.steps[ServerStatsMessage.op] = nil
        return snapshot
    }

    /// The server's heap: when it began listening, at the reading with the most connections
    /// open (per connection: the growth since listening over those connections), at shutdown.
    package static func memory(
        atListen: HeapSnapshot?,
        busiest: (heap: HeapSnapshot, connections: Int)?,
        atEnd: HeapSnapshot?
    ) -> RunMemory? {
        guard let atListen, let allocator = HeapStats.allocator else { return nil }
        return RunMemory(
            allocator: allocator,
            beforeClients: atListen,
            clientsReady: nil,
            measuredEnd: atEnd,
            clients: 0,
            clientsWaited: true,
            exchanges: 0,
            server: busiest.map {
                ServerMemory(before: atListen, connectionsBefore: 0, ready: $0.heap, connectionsReady: $0.connections)
            }
        )
    }

    package static func result(
        _ snapshot: ServerRecording.Snapshot,
        provider: any CryptoProvider,
        transport: String,
        address: String,
        started: Date,
        suites: SuiteRegistry
    ) -> RunResult {
        let groups = Self.groups(snapshot, provider: provider.name, transport: transport, suites: suites)
        let elapsed = UInt64(max(0, Date().timeIntervalSince(started)) * 1e9)
        #if DEBUG
        let build = "debug"
        #else
        let build = "release"
        #endif
        let exchanges = snapshot.exchanges.values.reduce(0, +) + snapshot.errors.values.flatMap(\.values).reduce(0, +)
        return RunResult(
            metadata: RunMetadata(
                scenario: "lab serve",
                description: "The server's own steps, as `lab serve` measured them while it ran.",
                startedAt: started,
                build: build,
                machine: MachineInfo.current(),
                providers: [ProviderInfo(name: provider.name, version: provider.version)],
                transport: "\(transport), listening on \(address)",
                clients: Int(snapshot.connections),
                load: "whatever clients sent",
                command: CommandLine.arguments.joined(separator: " ")
            ),
            scenarioText: "",
            groups: groups,
            measuredNanoseconds: elapsed,
            totalNanoseconds: elapsed,
            plannedIterations: nil,
            completedIterations: Int(exchanges),
            warmupIterations: 0,
            stoppedByDeadline: false
        )
    }

    /// One group per suite with the server's own steps, and `connections`: the connections
    /// (its iterations) and how those that did not end normally ended (its errors).
    static func groups(
        _ snapshot: ServerRecording.Snapshot,
        provider: String,
        transport: String,
        suites: SuiteRegistry
    ) -> [GroupResult] {
        var groups: [GroupResult] = []
        for suite in Set(snapshot.steps.keys).union(snapshot.errors.keys).sorted() {
            let errors = snapshot.errors[suite] ?? [:]
            var group = GroupResult(
                key: GroupKey(flow: "cx", suite: suite, provider: provider, transport: transport),
                flowKind: "cx",
                insecure: (try? suites.make(suite).isInsecure) ?? false,
                steps: snapshot.steps[suite] ?? [:],
                errors: errors,
                iterations: (snapshot.exchanges[suite] ?? 0) + errors.values.reduce(0, +)
            )
            group.packets = snapshot.packets[suite] ?? [:]
            groups.append(group)
        }
        let normal: Set<String> = ["peer-closed"]
        groups.append(
            GroupResult(
                key: GroupKey(flow: "connections", suite: "-", provider: provider, transport: transport),
                flowKind: "connections",
                insecure: false,
                steps: [:],
                errors: snapshot.closes.filter { !normal.contains($0.key) },
                iterations: snapshot.connections
            )
        )
        return groups
    }
}
