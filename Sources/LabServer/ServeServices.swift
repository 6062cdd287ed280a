package import LabCore
package import LabDiscovery
package import LabTransports
package import Logging
package import ServiceLifecycle
package import UnixSignals

/// `lab serve`'s lifetimes, as services of one `ServiceGroup`: the server, the heap sampler
/// and the DNS-SD advertisement. The group shuts them down in the reverse of their order:
/// the advertisement is withdrawn first, the sampler stops, then the server drains.
package enum ServeServices {
    /// Runs `services` until SIGINT or SIGTERM arrives on `signals`, then shuts them down
    /// gracefully. `signals` is made before the server listens, so that a signal that
    /// arrives while it starts is not lost, and does not kill the process.
    package static func run(_ services: [any Service], until signals: UnixSignalsSequence, logger: Logger) async throws {
        let group = ServiceGroup(services: services, logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask {
                for await signal in signals {
                    logger.notice("stopping on \(signal)")
                    await group.triggerGracefulShutdown()
                    return
                }
            }
            try await group.run()
            // The group ends once every service has; the signal's task may still wait.
            tasks.cancelAll()
        }
    }
}

/// The socket server: serves until the group shuts down, then drains the answers in flight
/// for at most `grace` (`SocketServer.shutdown(grace:)`).
package struct ServerService: Service {
    let server: any ListeningServer
    let grace: Duration

    /// The service of `server`, drained for at most `grace`.
    package init(server: any ListeningServer, grace: Duration) {
        self.server = server
        self.grace = grace
    }

    package func run() async throws {
        // Returns when the graceful shutdown begins; throws if the group is cancelled.
        let graceful = (try? await gracefulShutdown()) != nil
        await self.server.shutdown(grace: graceful ? self.grace : .zero)
    }
}

/// Samples the process heap once a second, for `--report`'s heap at the busiest moment.
package struct HeapSamplerService: Service {
    let statistics: ServerStatsResponder

    /// Samples for `statistics`.
    package init(statistics: ServerStatsResponder) { self.statistics = statistics }

    package func run() async throws {
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            self.statistics.sampleHeap()
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(1)) }
        }
    }
}

/// Keeps a DNS-SD advertisement until the group shuts down, then withdraws it.
package struct AdvertisementService: Service {
    let advertisement: Advertisement

    /// Keeps `advertisement`.
    package init(advertisement: Advertisement) { self.advertisement = advertisement }

    package func run() async throws {
        try? await gracefulShutdown()
        self.advertisement.cancel()
    }
}

/// `lab serve --report-interval`: writes the report at each interval until the group shuts
/// down (the final report is written after the server has drained). A write that fails is
/// logged, and the next one tried.
package struct ReportWriterService: Service {
    let interval: TimeSpan
    let write: @Sendable () throws -> Void

    /// Writes with `write` every `interval`.
    package init(interval: TimeSpan, write: @escaping @Sendable () throws -> Void) {
        self.interval = interval
        self.write = write
    }

    package func run() async throws {
        let logger = Logger(label: "lab.serve")
        let pause = Duration.nanoseconds(Int64(self.interval.nanoseconds))
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            guard (try? await cancelWhenGracefulShutdown { try await Task.sleep(for: pause) }) != nil else { return }
            do {
                try self.write()
            } catch {
                logger.error("the periodic report could not be written: \(error)")
            }
        }
    }
}

/// `lab serve --metrics-port`: the metrics page, until the group shuts down.
package struct MetricsService: Service {
    let endpoint: MetricsEndpoint

    /// Serves `endpoint`.
    package init(endpoint: MetricsEndpoint) { self.endpoint = endpoint }

    package func run() async throws {
        try? await gracefulShutdown()
        await self.endpoint.shutdown()
    }
}
