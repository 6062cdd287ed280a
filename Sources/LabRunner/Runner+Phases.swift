import Foundation
import LabCore
import LabResults
import LabScenario

/// The phases of `Runner.run` that hold state of their own: finding the server, building the
/// flows and preparing the clients, and running the clients.
extension Runner {
    /// Where the clients find the server: nil for servers this process starts; otherwise an
    /// endpoint given by address or found once by DNS-SD (timed as `discover`, a set-up step
    /// of every flow). With the server's description for the report.
    func locateServer(
        _ transport: any Transport
    ) async throws -> (endpoint: (any TransportEndpoint)?, discovery: StepTimings, description: String) {
        let server = self.plan.scenario.server
        var discovery = StepTimings()
        if let address = server.address {
            return (try await transport.remote(host: address.host, port: address.port), discovery, "at \(address)")
        }
        guard let service = server.discover else { return (nil, discovery, "in this process") }
        guard let discoverer = self.plan.plugins.discovery else {
            throw LabError(.unsupported, "This build of the lab has no DNS-SD discovery")
        }
        let start = Stopwatch.now()
        let found = try await discoverer.find(service: service, instance: server.instance, timeout: server.discoveryTimeout)
        discovery.record(.discover, nanoseconds: Stopwatch.now() &- start)
        return (
            try await transport.remote(host: found.host, port: found.port),
            discovery,
            "'\(found.instance)' found by DNS-SD (\(service)) at \(found.host):\(found.port)"
        )
    }

    /// Every flow made, each with the endpoint its clients reach (a server started here unless
    /// `remote`), and every client of this process prepared, in parallel. Servers already
    /// listening are shut down when anything fails: they must not outlive a run that could not
    /// start.
    func buildAndPrepare(
        _ transport: any Transport,
        remote: (any TransportEndpoint)?,
        discovery: StepTimings,
        clients mine: Range<Int>,
        memory: RunMemoryProbe
    ) async throws -> (built: [Built], histograms: StepHistograms, prepared: [PreparedClient]) {
        var built: [Built] = []
        do {
            for planned in self.plan.flows {
                var setup = StepTimings()
                for (step, sample) in discovery.samples { setup.record(step, sample: sample) }
                let flow = try planned.make(&setup, self.plan.dataDirectory)
                let endpoint: any TransportEndpoint
                if let remote {
                    endpoint = remote
                } else if let handler = flow.handler {
                    endpoint = try await transport.serve(handler)
                } else {
                    throw LabError(.unsupported, "The flow '\(planned.label)' has no server side to serve")
                }
                built.append(Built(planned: planned, flow: flow, endpoint: endpoint, setupSteps: setup))
            }
            let flows = built
            let histograms = StepHistograms(groups: flows.count)
            memory.beforeClients()
            var prepared: [PreparedClient?] = Array(repeating: nil, count: mine.count)
            try await withThrowingTaskGroup(of: (Int, PreparedClient).self) { group in
                for slot in 0..<mine.count {
                    group.addTask {
                        (slot, try await Self.prepareClient(built: flows, histograms: histograms, index: mine.lowerBound + slot))
                    }
                }
                for try await (slot, client) in group { prepared[slot] = client }
            }
            return (flows, histograms, prepared.map { $0! })
        } catch {
            for item in built { await item.endpoint.shutdown() }
            throw error
        }
    }

    /// Runs every client of this process to its end, from `runStart`; the servers are shut
    /// down if one fails.
    func runClients(
        _ mine: Range<Int>,
        prepared: [PreparedClient],
        built flows: [Built],
        barrier: RoundBarrier?,
        checkpoints: Checkpoints,
        runStart: UInt64
    ) async throws -> [ClientRecorder] {
        let load = self.plan.scenario.load
        let deadline = runStart &+ load.deadline.nanoseconds
        let scheduleStart = runStart &+ self.plan.scenario.clients.rampUp.nanoseconds
        let measuredStart = scheduleStart &+ (load.model == .open ? load.warmup.nanoseconds : 0)
        for item in flows { item.flow.measuredPhaseStarts(at: measuredStart) }
        do {
            return try await withThrowingTaskGroup(of: ClientRecorder.self) { group in
                for (slot, index) in mine.enumerated() {
                    group.addTask {
                        try await self.runClient(
                            index,
                            prepared: prepared[slot],
                            built: flows,
                            barrier: barrier,
                            checkpoints: checkpoints,
                            runStart: runStart,
                            scheduleStart: scheduleStart,
                            deadline: deadline
                        )
                    }
                }
                var recorders: [ClientRecorder] = []
                recorders.reserveCapacity(mine.count)
                for try await recorder in group { recorders.append(recorder) }
                return recorders
            }
        } catch {
            for item in flows { await item.endpoint.shutdown() }
            throw error
        }
    }
}
