import ArgumentParser
import Foundation
import LabCore
import LabDiscovery
import LabKit
import LabMemory
import LabMessaging
import LabReport
import LabResults
import LabRunner
import LabServer
import LabTransports
import LabWire
import Logging
import ServiceLifecycle
import UnixSignals

/// `lab serve`: a cx/1 server on real sockets, for `lab run` on this host or another, or for
/// any client written from docs/protocol.md.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve cx/1 and msg/1 over TCP or TLS until SIGINT or SIGTERM.",
        discussion: """
            The first line on stdout is `listening on HOST:PORT`. With TLS, the next lines give the \
            certificate's fingerprints, for clients to pin. Connection events go to stderr. msg/1 keeps \
            its accounts and chats in the SQLite file --db names.
            """
    )

    @OptionGroup(title: "Listener")
    var listener: ListenerOptions

    @Option(help: "Also write the port, once listening, to this file.")
    var portFile: String?

    @Option(help: "The crypto provider: \(LabCLI.catalog.plugins.providers.names.joined(separator: ", ")).")
    var provider = "swift-crypto"

    @Option(
        help: ArgumentHelp(
            "The suites offered, comma-separated; `classic@1024` sets an RSA size. Default: all the provider can do.",
            valueName: "list"
        )
    )
    var suites: SuiteList?

    @Option(help: "When the server makes its signing keys (fixed: the lab's published test keys).")
    var keys = KeyLifetime.perRun

    @Option(help: "Advertise the server by DNS-SD (_crypttest._tcp) under this instance name.")
    var advertise: String?

    @Option(help: "On shutdown, write the server's own step timings (csv, markdown, json) here.")
    var report: String?

    @Option(help: "Serve Prometheus metrics over HTTP on this port (GET /metrics); 0 picks a free one.")
    var metricsPort: Int?

    @Option(help: "The address the metrics page listens on.")
    var metricsHost = "127.0.0.1"

    @Option(
        help: """
            With --report, also write the report this often while serving, e.g. "1 min", so that \
            a server killed (SIGKILL, out of memory) leaves its figures up to the last one.
            """
    )
    var reportInterval: TimeSpan?

    @Option(help: "Log level on stderr.")
    var logLevel = Logger.Level.info

    @Option(help: "Log lines on stderr as text, or as one JSON object per line for a log collector.")
    var logFormat = LogFormat.text

    func validate() throws {
        if let port = self.metricsPort, !(0...65535).contains(port) {
            throw ValidationError("--metrics-port must be 0...65535")
        }
        if let interval = self.reportInterval {
            guard self.report != nil else { throw ValidationError("--report-interval writes the --report: give one") }
            guard interval >= .seconds(1) else { throw ValidationError("--report-interval must be at least 1 s") }
        }
    }

    @OptionGroup(title: "msg/1")
    var messaging: MessagingServeOptions

    func run() async throws {
        try await reportingErrors {
            self.bootstrapLogging()
            // Trapped before the server listens: a signal from now on stops it cleanly.
            let signals = await UnixSignalsSequence(trapping: .sigint, .sigterm)
            // Every connection is a file: as many as the hard limit allows.
            let files = OpenFileLimit.raise()
            Logger(label: "lab.serve").info(
                "open files: at most \(files.soft) (RLIMIT_NOFILE hard limit \(files.hard))"
            )
            let settings = try self.fittedSettings(openFiles: files.soft)
            // Freed pages go back at once, so that the bounds below hold in the resident size
            // too (jemalloc keeps them 10 s by default; no cost measured on cx requests:
            // 475-479 µs of server CPU each either way, docs/hardening.md).
            let freedPagesReturned = HeapStats.returnFreedPages(after: 0)
            let server = try ServerAssembly.assemble(
                settings,
                plugins: LabCLI.catalog.plugins,
                heap: { HeapStats.current() }
            )
            let socket = try await ServerAssembly.listen(server, transports: LabCLI.catalog.plugins.transports)
            var lines = Self.announcement(server, socket: socket, openFiles: files.soft)
            if freedPagesReturned { lines[3] += "; freed pages returned at once" }
            // The port file first: whoever waits for the `listening on` line may read it at once.
            if let portFile = self.portFile {
                try Self.writeAtomically("\(socket.port)\n", to: portFile)
            }
            Self.printNow(lines)
            // The heap with no client yet, then once a second (and at every serverStats answer)
            // with the connections open then: `--report` shows the heap per connection at the busiest.
            let heapAtListen = HeapStats.current()
            let services = try await self.services(server, socket: socket, heapAtListen: heapAtListen)
            try await ServeServices.run(services, until: signals, logger: Logger(label: "lab.serve"))
            let snapshot = ServerReport.exchanges(server.recording.snapshot())
            if let report = self.report {
                try self.writeReport(
                    snapshot,
                    to: report,
                    server: server,
                    address: socket.address,
                    heapAtListen: heapAtListen
                )
            }
            let answered = snapshot.exchanges.values.reduce(0, +)
            let failed = snapshot.errors.values.flatMap(\.values).reduce(0, +)
            Self.printNow([
                "stopped: \(snapshot.connections) connections, \(answered) exchanges, \(failed) error answers"
            ])
        }
    }

    /// Logs to stderr as `--log-format` says, at `--log-level`.
    private func bootstrapLogging() {
        let (level, format) = (self.logLevel, self.logFormat)
        LoggingSystem.bootstrap { label in
            switch format {
            case .text:
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = level
                return PrintableLogHandler(inner: handler)
            case .json:
                return JSONLogHandler(label: label, logLevel: level)
            }
        }
    }

    /// The settings, with the connection limit fitted to `openFiles`: a connection past the
    /// descriptors fails in accept, where no `busy` can be said; the log says when it is lowered.
    private func fittedSettings(openFiles: UInt64) throws -> ServerSettings {
        var settings = try self.settings()
        let asked = settings.options.maxConnections
        let reserve = OpenFileLimit.serverReserve(openNow: OpenFileLimit.openNow() ?? 64)
        let fitted = OpenFileLimit.connectionsFitting(asked: asked, soft: openFiles, reserve: reserve)
        if fitted < asked {
            Logger(label: "lab.serve").warning(
                "--max-connections lowered from \(asked) to \(fitted): \(openFiles) open files, \(reserve) kept for the rest (RLIMIT_NOFILE; raise it to serve more)"
            )
            settings.options.maxConnections = fitted
        }
        return settings
    }

    /// The lines that say what listens where: address, suites, protocols, limits (the fourth
    /// line), msg/1's settings, the transport's own (a TLS certificate's pin).
    static func announcement(_ server: AssembledServer, socket: any ListeningServer, openFiles: UInt64) -> [String] {
        let options = server.settings.options
        var lines = ["listening on \(socket.address)"]
        lines.append("suites: \(server.suites.joined(separator: ", ")) (provider \(server.provider.name))")
        lines.append("protocols: \(server.protocols.joined(separator: ", "))")
        lines.append(
            "connections: at most \(options.maxConnections) (open files: \(openFiles)); frames arriving: at most \(options.maxBufferedBytes) bytes held; unread answers: at most \(options.maxBufferedBytes) bytes held; fetch pages being made: at most \(options.maxBufferedBytes) bytes"
        )
        if let messaging = server.messaging {
            lines.append("msg/1: \(messaging.options.description), store \(messaging.store.path)")
        }
        return lines + socket.announcement
    }

    /// The server's lifetimes: the socket, the heap sampler, and as the options ask the
    /// metrics page, the DNS-SD advertisement and the periodic report.
    private func services(
        _ server: AssembledServer,
        socket: any ListeningServer,
        heapAtListen: HeapSnapshot?
    ) async throws -> [any Service] {
        var services: [any Service] = [
            ServerService(server: socket, grace: server.settings.drain),
            HeapSamplerService(statistics: server.statistics),
        ]
        if let port = self.metricsPort {
            let metrics = try await MetricsEndpoint.start(host: self.metricsHost, port: port) {
                ServerMetrics.page(server)
            }
            Self.printNow(["metrics on http://\(metrics.address)/metrics"])
            services.append(MetricsService(endpoint: metrics))
        }
        if let advertisement = try await self.advertise(socket, server: server) { services.append(advertisement) }
        if let report = self.report, let interval = self.reportInterval {
            services.append(
                ReportWriterService(interval: interval) {
                    try self.writeReport(
                        ServerReport.exchanges(server.recording.snapshot()),
                        to: report,
                        server: server,
                        address: socket.address,
                        heapAtListen: heapAtListen,
                        quietly: true
                    )
                }
            )
        }
        return services
    }

    /// With `--advertise`: the server announced by DNS-SD, as a service that withdraws the
    /// announcement at shutdown. Shuts the server down if it cannot be announced.
    private func advertise(_ socket: any ListeningServer, server: AssembledServer) async throws -> (any Service)? {
        guard let name = self.advertise else { return nil }
        if ["127.0.0.1", "::1", "localhost"].contains(self.listener.host) {
            // Avahi announces the host's addresses on every interface it serves; a
            // client elsewhere would find this server and be refused.
            Logger(label: "lab.serve").warning(
                "advertising a server that listens on \(self.listener.host): only clients on this host can use it; --host 0.0.0.0 serves the others"
            )
        }
        do {
            let txt = ServerTXT(protocols: server.protocols, suites: server.suites, tls: self.listener.useTLS)
            let advertisement = try await DNSSD.advertise(name: name, port: socket.port, txt: txt.records)
            Self.printNow(["advertised as '\(advertisement.name)' (\(DNSSD.defaultType), local.)"])
            return AdvertisementService(advertisement: advertisement)
        } catch {
            await socket.shutdown(grace: .zero)
            throw error
        }
    }

    /// `--report`: the server's own step timings and heap, written as the run reports are.
    private func writeReport(
        _ snapshot: ServerRecording.Snapshot,
        to report: String,
        server: AssembledServer,
        address: String,
        heapAtListen: HeapSnapshot?,
        quietly: Bool = false
    ) throws {
        var result = ServerReport.result(
            snapshot,
            provider: server.provider,
            transport: server.settings.transport,
            address: address,
            started: server.statistics.startedAt,
            suites: LabCLI.catalog.plugins.suites
        )
        result.memory = ServerReport.memory(
            atListen: heapAtListen,
            busiest: server.statistics.busiest.reading,
            atEnd: HeapStats.current()
        )
        let written = try LabCLI.catalog.reporters.writeReports(
            result,
            formats: ReporterRegistry.standardFormats,
            charts: true,
            to: URL(fileURLWithPath: report)
        )
        guard !quietly else { return }
        FileHandleOutput.standardError(
            "server report: \(written.map(\.lastPathComponent).joined(separator: ", ")) in \(report)\n"
        )
    }

    /// The server these options describe, typed: what `ServerAssembly` builds.
    func settings() throws -> ServerSettings {
        ServerSettings(
            transport: self.listener.transport,
            options: self.listener.transportOptions,
            provider: self.provider,
            suites: self.suites?.choices,
            keys: self.keys,
            protocols: self.protocolSettings(),
            drain: self.listener.drain
        )
    }

    /// Each served protocol's own settings: msg/1's, unless `--no-messaging`.
    func protocolSettings() -> PluginExtensions {
        var settings = PluginExtensions()
        settings[MessagingServing.self] = self.messagingSettings()
        return settings
    }

    /// msg/1's settings, unless `--no-messaging`. Without `--db` or `--report`, the store is in
    /// a folder of this process's own: two servers started in the same second shared one
    /// store, and the second failed creating tables the first had made.
    func messagingSettings() -> MessagingSettings? {
        guard !self.messaging.noMessaging else { return nil }
        let folder =
            self.report
            ?? Run.defaultDirectory(named: "serve", at: Date()).path + "-\(ProcessInfo.processInfo.processIdentifier)"
        // Checked by the parser (`MessagingServeOptions.validate()`).
        let spec = try? self.messaging.spec(kinds: LabCLI.messagingKinds)
        return MessagingSettings(
            options: spec?.options ?? MessagingOptions(),
            clock: spec?.clock ?? .system,
            store: self.messaging.db ?? URL(fileURLWithPath: folder).appendingPathComponent("messaging.sqlite").path
        )
    }

    /// Prints and flushes at once: whoever started the server waits for these lines on a pipe.
    static func printNow(_ lines: [String]) {
        FileHandle.standardOutput.write(Data((lines.joined(separator: "\n") + "\n").utf8))
    }

    static func writeAtomically(_ text: String, to path: String) throws {
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw LabError(.invalidScenario, "Cannot write the port file '\(path)': \(FileReason.describe(error))")
        }
    }
}
