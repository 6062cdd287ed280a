import Foundation
import LabCore
import LabTestSupport
import Logging
import NIOCore
import NIOPosix
import Synchronization

/// Throw-away TLS identities made by `Tests/scripts/generate-certs.sh` with the openssl command
/// line, and their fingerprints as openssl computes them (not as the lab does).
struct TestCertificates {
    let folder: URL

    /// Runs the script on a thread of its own (`runBlocking`): key generation takes seconds on
    /// a loaded machine, and must not hold one of the concurrency pool's few threads.
    init() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lab-certs-\(UUID().uuidString)")
        self.folder = folder
        let script = RepositoryPaths.root.appendingPathComponent("Tests/scripts/generate-certs.sh")
        let outcome = try await runBlocking {
            try ChildProcess.runWaiting(URL(fileURLWithPath: "/bin/bash"), [script.path, folder.path])
        }
        guard outcome.status == 0 else { throw LabError(.unsupported, "generate-certs.sh failed: \(outcome.errors)") }
    }

    func certificate(_ name: String) -> String { self.folder.appendingPathComponent("\(name).pem").path }
    func key(_ name: String) -> String { self.folder.appendingPathComponent("\(name).key").path }

    /// `AB:CD:…`, from `openssl x509 -fingerprint -sha256`.
    func opensslFingerprint(_ name: String) async throws -> String {
        let output = try await Self.shell("openssl x509 -in '\(self.certificate(name))' -noout -fingerprint -sha256")
        return String(output.split(separator: "=").last ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The SPKI SHA-256 in base64, from openssl's own pipeline (the curl `--pinnedpubkey` recipe).
    func opensslSPKI(_ name: String) async throws -> String {
        try await Self.shell(
            "openssl x509 -in '\(self.certificate(name))' -pubkey -noout | openssl pkey -pubin -outform der"
                + " | openssl dgst -sha256 -binary | base64"
        ).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func shell(_ command: String) async throws -> String {
        let outcome = try await runBlocking { try ChildProcess.runWaiting(URL(fileURLWithPath: "/bin/sh"), ["-c", command]) }
        guard outcome.status == 0 else { throw LabError(.unsupported, "`\(command)` failed: \(outcome.errors)") }
        return outcome.output
    }

    func cleanUp() {
        try? FileManager.default.removeItem(at: self.folder)
    }
}

/// A swift-log handler that keeps every message, to check what the server logged.
struct CapturingLogHandler: LogHandler {
    final class Store: Sendable {
        private let lines = Mutex<[String]>([])

        func append(_ line: String) { self.lines.withLock { $0.append(line) } }

        var all: [String] { self.lines.withLock { $0 } }

        func contains(_ text: String) -> Bool { self.all.contains { $0.contains(text) } }
    }

    let store: Store
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { self.metadata[key] }
        set { self.metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = self.metadata.merging(event.metadata ?? [:]) { $1 }
        let fields = merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        self.store.append("\(event.level) \(event.message) \(fields)")
    }

    static func logger() -> (Logger, Store) {
        let store = Store()
        return (Logger(label: "test.server") { _ in CapturingLogHandler(store: store) }, store)
    }
}

/// A peer that speaks raw bytes: what a hostile or broken client sends.
enum RawPeer {
    /// What happened to one raw connection.
    struct Outcome {
        /// Every byte the server sent before it closed.
        var received: [UInt8]
        /// Whether the server closed the connection (rather than the time limit running out).
        var closedByServer: Bool
    }

    /// Connects to `port`, runs `script` to send, then reads until the server closes or
    /// `limit` passes; with `hangUp`, closes right after sending instead. `connected` gets the
    /// connection's local port (the server's logs name the peer by it) once it is up.
    static func run(
        port: Int,
        limit: Duration = .seconds(10),
        hangUp: Bool = false,
        connected: @Sendable (Int) -> Void = { _ in },
        _ script: @escaping @Sendable (NIOAsyncChannelOutboundWriter<ByteBuffer>) async throws -> Void
    ) async throws -> Outcome {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        connected(channel.channel.localAddress?.port ?? 0)
        let result = Mutex<Outcome?>(nil)
        do {
            try await channel.executeThenClose { inbound, outbound in
                try await script(outbound)
                if hangUp {
                    result.withLock { $0 = Outcome(received: [], closedByServer: false) }
                    return
                }
                let outcome = try await Self.read(inbound, limit: limit)
                result.withLock { $0 = outcome }
            }
        } catch let error as ChannelError where error == .ioOnClosedChannel || error == .alreadyClosed {
            // Closing a channel the server already closed: not a failure of the peer's script.
        }
        guard let outcome = result.withLock({ $0 }) else { throw ChannelError.ioOnClosedChannel }
        return outcome
    }

    private static func read(
        _ inbound: NIOAsyncChannelInboundStream<ByteBuffer>,
        limit: Duration
    ) async throws
        -> Outcome
    {
        try await withThrowingTaskGroup(of: Outcome?.self) { group in
            group.addTask {
                var received: [UInt8] = []
                do {
                    for try await buffer in inbound { received += Array(buffer.readableBytesView) }
                } catch {
                    // A reset counts as closed by the server too.
                }
                return Outcome(received: received, closedByServer: true)
            }
            group.addTask {
                try await Task.sleep(for: limit)
                return nil
            }
            let first = try await group.next()!
            group.cancelAll()
            return first ?? Outcome(received: [], closedByServer: false)
        }
    }
}
