import Histogram
package import LabCore
package import LabResults
import LabWire

/// The server's own steps during a run against a server elsewhere (`lab serve`), fetched
/// with the lab's `serverStats` request before and after the run: the difference is what
/// the server did meanwhile, for every client it served (other clients' work included, if
/// others were using it).
package enum ServerSide {
    /// The server's totals now, or why they are not available.
    package static func fetch(_ endpoint: any TransportEndpoint) async -> Result<ServerStats, LabError> {
        await self.fetch(endpoint, whenOpen: nil)
    }

    /// The server's totals once it counts at least `connections` open (this request's own
    /// among them), asked again every 10 ms on one connection for at most `patience`; the
    /// last answer if it never gets there, or one answer when `connections` is nil.
    ///
    /// The kernel completes a client's handshake before the server's event loop takes the
    /// connection on: just after 500 idle clients had connected, a loaded machine's server
    /// had taken 470 of them.
    package static func fetch(
        _ endpoint: any TransportEndpoint,
        whenOpen connections: Int?,
        patience: Duration = .seconds(2)
    ) async -> Result<ServerStats, LabError> {
        let deadline = ContinuousClock.now.advanced(by: patience)
        do {
            var ignored = NoStepRecorder()
            let connection = try await endpoint.connect(recorder: &ignored)
            do {
                while true {
                    let answer = try await connection.request(
                        try ServerStatsMessage.request(),
                        step: Step("server-stats"),
                        recorder: &ignored
                    )
                    let stats = try ServerStatsMessage.decodeAnswer(answer)
                    guard let connections, let open = stats.openConnections, open < connections,
                        ContinuousClock.now < deadline
                    else {
                        await connection.close()
                        return .success(stats)
                    }
                    try await Task.sleep(for: .milliseconds(10))
                }
            } catch {
                await connection.close()
                throw error
            }
        } catch let error as LabError {
            return .failure(error)
        } catch {
            return .failure(LabError(.unsupported, "The server's statistics could not be fetched: \(error)"))
        }
    }

    /// The server's CPU between `before` and `after`, over the requests it answered meanwhile
    /// (its `serverStats` answers left out); nil from a server that does not report its CPU.
    static func cpu(before: ServerStats, after: ServerStats) throws -> RunCPU.Server? {
        guard let cpuBefore = before.cpu, let cpuAfter = after.cpu, let clockBefore = before.clockNanoseconds,
            let clockAfter = after.clockNanoseconds, clockAfter >= clockBefore
        else { return nil }
        let added = try after.subtracting(before)
        let requests = added.groups.filter { $0.name != ServerStatsMessage.op }.reduce(UInt64(0)) {
            $0 &+ $1.answered &+ $1.errors.values.reduce(0, &+)
        }
        return RunCPU.Server(
            process: cpuAfter.since(cpuBefore),
            requests: requests,
            wallNanoseconds: clockAfter - clockBefore,
            cores: after.machine.cores
        )
    }

    /// The report groups of what the server did between `before` and `after`: one `server`
    /// group per server group (suite or msg/1 op), keyed by the server's provider.
    static func groups(before: ServerStats, after: ServerStats, transport: String) throws -> [GroupResult] {
        let added = try after.subtracting(before)
        return try added.groups.filter { $0.name != ServerStatsMessage.op }.map { group in
            var steps: [Step: Histogram<UInt64>] = [:]
            for entry in group.steps {
                steps[Step(entry.step)] = try entry.histogram.histogram(path: "server.\(group.name).\(entry.step)")
            }
            var result = GroupResult(
                key: GroupKey(flow: "server", suite: group.name, provider: added.provider.name, transport: transport),
                flowKind: GroupResult.serverSideKind,
                insecure: false,
                steps: steps,
                errors: group.errors,
                iterations: group.answered + group.errors.values.reduce(0, +)
            )
            for (step, packets) in group.packets ?? [:] { result.packets[Step(step)] = packets }
            return result
        }
    }
}
