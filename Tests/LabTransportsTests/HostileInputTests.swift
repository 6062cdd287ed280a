import Foundation
import LabBuiltIns
import LabCX
import LabCore
import LabFraming
import LabResults
import LabRunner
import LabTestSupport
import LabTransports
import LabWire
import Logging
import NIOCore
import Testing

/// Bad input from the network ends that one connection, with its reason logged, and the server
/// goes on serving everyone else (docs/protocol.md §1).
///
/// Serialized: the stalling peer's case uses a 1 s idle timeout, which honest clients must
/// not hit while the 100-client case loads both cores.
@Suite(.tier(.load), .serialized)
struct HostileInputTests {
    /// A cx/1 server (x25519 on swift-crypto) on loopback with a short idle timeout and a
    /// 64 KiB frame limit, logging into `log` and totalling closes in `recording`.
    struct Server {
        let server: SocketServer
        let log: CapturingLogHandler.Store
        let recording: ServerRecording

        static let maxFrameBytes = 65_536

        /// A server; `idleTimeout` short enough that a stalled peer is dropped within the test,
        /// long enough that an honest client waiting its turn on a loaded machine is not.
        static func start(
            idleTimeout: TimeSpan,
            frameTimeout: TimeSpan = .seconds(30),
            maxConnections: Int = TransportOptions.defaultMaxConnections
        ) async throws -> Server {
            let provider = try BuiltInPlugins.providers.make("swift-crypto")
            var keygen = NoStepRecorder()
            let handler = try CXFlow.serverHandler(
                provider: provider,
                suites: [try BuiltInPlugins.suites.make("x25519")],
                recorder: &keygen
            )
            let (logger, log) = CapturingLogHandler.logger()
            let recording = ServerRecording()
            let server = try await SocketServer.start(
                handler: handler,
                configuration: SocketServer.Configuration(
                    framing: Framing(maxFrameBytes: Self.maxFrameBytes),
                    idleTimeout: idleTimeout,
                    frameTimeout: frameTimeout,
                    maxConnections: maxConnections,
                    logger: logger
                ),
                recording: recording
            )
            return Server(server: server, log: log, recording: recording)
        }

        /// Runs `body` with this server, then shuts it down, whether `body` returned or threw.
        func serving<Result>(_ body: (Server) async throws -> Result) async throws -> Result {
            try await withCleanup({ await self.server.shutdown() }) { try await body(self) }
        }

        /// `clients` honest clients, `iterations` exchanges each, through the runner.
        func honestRun(clients: Int, iterations: Int) async throws -> RunResult {
            let json = """
                {
                  "name": "honest",
                  "server": { "transport": "tcp", "address": "127.0.0.1:\(self.server.port)", "maxFrameBytes": \(Self.maxFrameBytes) },
                  "clients": { "count": \(clients) },
                  "load": { "iterations": \(iterations), "deadline": "60 s" },
                  "flows": [ { "flow": "cx", "suite": "x25519" } ]
                }
                """
            return try await TestPlan.run(json)
        }
    }

    /// A valid x25519 request, made by the lab's own client.
    static func validRequest() throws -> [UInt8] {
        try Self.request(try BuiltInPlugins.providers.make("swift-crypto"))
    }

    private static func request<P: CryptoProvider>(_ provider: P) throws -> [UInt8] {
        var none = NoStepRecorder()
        var client = try CXClient(
            provider: provider,
            options: CXClientOptions(suite: try BuiltInPlugins.suites.make("x25519")),
            recorder: &none
        )
        return try client.makeRequest(recorder: &none)
    }

    static func frame(_ body: [UInt8]) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.writeInteger(UInt32(body.count), endianness: .big)
        buffer.writeBytes(body)
        return buffer
    }

    /// The kinds of bad input, each with the close reason the server must log and count.
    enum Attack: String, CaseIterable, Sendable {
        case zeroLength, oversizedLength, garbageBody, wrongShapePlist, halfFrameThenStall, halfFrameThenClose,
            disconnectMidExchange, slowLoris

        /// The `ServerRecording` close code (and log text) this attack must produce.
        var closeCode: String {
            switch self {
            case .zeroLength: "emptyFrame"
            case .oversizedLength: "frameTooLarge"
            case .garbageBody, .wrongShapePlist: "badRequest"
            case .halfFrameThenStall, .slowLoris: "timedOut"
            case .halfFrameThenClose: "truncatedFrame"
            // The answer meets a closed socket: a write error, or an orderly end if the close is seen first.
            case .disconnectMidExchange: "io|peer-closed"
            }
        }

        /// Sends the attack; returns what the server did.
        func perform(port: Int) async throws -> RawPeer.Outcome {
            switch self {
            case .zeroLength:
                return try await RawPeer.run(port: port) { try await $0.write(ByteBuffer(bytes: [0, 0, 0, 0])) }
            case .oversizedLength:
                // The header alone: the server must close without waiting for 4 GiB of body.
                return try await RawPeer.run(port: port) {
                    try await $0.write(ByteBuffer(bytes: [0xFF, 0xFF, 0xFF, 0xF0]))
                }
            case .garbageBody:
                // "bplist00" and then junk: not a legacy key (§2.2), and no property list either.
                let junk = Array("bplist00".utf8) + (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 37) }
                return try await RawPeer.run(port: port) { try await $0.write(HostileInputTests.frame(junk)) }
            case .wrongShapePlist:
                // A real binary property list, but an array of the wrong things instead of the request dictionary.
                let plist = try PropertyListSerialization.data(
                    fromPropertyList: ["suite", 42],
                    format: .binary,
                    options: 0
                )
                return try await RawPeer.run(port: port) { try await $0.write(HostileInputTests.frame(Array(plist))) }
            case .halfFrameThenStall:
                return try await RawPeer.run(port: port) {
                    var buffer = ByteBuffer()
                    buffer.writeInteger(UInt32(100), endianness: .big)
                    buffer.writeBytes([UInt8](repeating: 1, count: 10))
                    try await $0.write(buffer)
                }
            case .halfFrameThenClose:
                return try await RawPeer.run(port: port, hangUp: true) {
                    var buffer = ByteBuffer()
                    buffer.writeInteger(UInt32(100), endianness: .big)
                    buffer.writeBytes([UInt8](repeating: 1, count: 10))
                    try await $0.write(buffer)
                }
            case .slowLoris:
                // A byte every 100 ms: never idle, yet the frame never completes. The server's
                // frame timeout (1 s in these tests) must end it; the loop is bounded at 10 s.
                return try await RawPeer.run(port: port) { outbound in
                    var header = ByteBuffer()
                    header.writeInteger(UInt32(1000), endianness: .big)
                    try await outbound.write(header)
                    for _ in 0..<100 {
                        try await Task.sleep(for: .milliseconds(100))
                        // The server has closed: stop trickling and read what it did.
                        do { try await outbound.write(ByteBuffer(bytes: [0x2A])) } catch { return }
                    }
                }
            case .disconnectMidExchange:
                let request = try HostileInputTests.validRequest()
                return try await RawPeer.run(port: port, hangUp: true) {
                    try await $0.write(HostileInputTests.frame(request))
                }
            }
        }
    }

    /// Awaits (at most 10 s) the server's count of `count` closes under `codes` (`a|b` for either).
    static func awaitCloses(_ recording: ServerRecording, _ codes: String, count: UInt64 = 1) async throws {
        let set = Set(codes.split(separator: "|").map(String.init))
        try await withDeadline(.seconds(10), "\(count) '\(codes)' closes (closes: \(recording.snapshot().closes))") {
            await recording.closes(set, reaching: count)
        }
    }

    @Test(arguments: Attack.allCases)
    func eachAttackEndsOnlyItsConnection(attack: Attack) async throws {
        // Only the stalling peer needs a short idle timeout; under a loaded test run an honest
        // client can wait its turn for over a second.
        let server = try await Server.start(
            idleTimeout: attack == .halfFrameThenStall ? .seconds(1) : .seconds(30),
            frameTimeout: attack == .slowLoris ? .seconds(1) : .seconds(30)
        )
        try await server.serving { server in
            let outcome = try await attack.perform(port: server.server.port)
            try await Self.awaitCloses(server.recording, attack.closeCode)
            switch attack {
            case .zeroLength, .oversizedLength:
                #expect(outcome.closedByServer && outcome.received.isEmpty, "closed at once, nothing answered")
            case .garbageBody, .wrongShapePlist:
                // An error answer (§2.3), then the close.
                #expect(outcome.closedByServer)
                let body = try FrameParser.singleFrame(outcome.received)
                guard case .error(let reply) = try CXReply(decoding: body) else {
                    Issue.record("expected an error answer")
                    break
                }
                #expect(reply.code == .badRequest)
            case .halfFrameThenStall:
                #expect(outcome.closedByServer && outcome.received.isEmpty)
            case .slowLoris:
                // Closed by the frame timeout while the peer was still trickling (the write
                // failed, or the read saw the close), not by the idle timeout of 30 s.
                #expect(outcome.received.isEmpty)
                #expect(server.log.contains("still arriving"), "the frame timeout's reason is logged: \(server.log.all)")
            case .halfFrameThenClose, .disconnectMidExchange:
                break
            }
            if attack != .disconnectMidExchange {
                #expect(
                    server.log.contains(attack.closeCode),
                    "the reason '\(attack.closeCode)' is logged: \(server.log.all)"
                )
            }
            let honest = try await server.honestRun(clients: 2, iterations: 3)
            #expect(honest.errorCount == 0, "errors: \(honest.groups.map(\.errors)); log: \(server.log.all)")
            #expect(honest.completedIterations == 6, "the server still serves everyone else")
        }
    }
}

/// The connection limit: one connection over it is answered `busy` (docs/protocol.md §2.3) and
/// closed, and a place freed is served again.
@Suite(.tier(.integration)) struct ConnectionLimitTests {
    @Test("the connection after the limit is answered busy; a freed place is served again")
    func overTheLimitIsBusy() async throws {
        // Idleness is not what this tests: with 30 s, a clean clone's CI pass, its pool busy with
        // other suites, took 57 s here, the held connections were closed as idle, and the
        // fourth was served instead of refused.
        let server = try await HostileInputTests.Server.start(idleTimeout: .seconds(3_600), maxConnections: 3)
        try await server.serving { server in
            let port = server.server.port
            let endpoint = try await TCPTransport(options: TransportOptions()).remote(host: "127.0.0.1", port: port)
            var none = NoStepRecorder()
            var held: [any Connection] = []
            for _ in 0..<3 {
                // Answered, so surely accepted and counted by the server.
                let connection = try await endpoint.connect(recorder: &none)
                _ = try await connection.request(try HostileInputTests.validRequest(), recorder: &none)
                held.append(connection)
            }
            let refused = try await RawPeer.run(port: port) { _ in }
            #expect(refused.closedByServer)
            let body = try FrameParser.singleFrame(refused.received)
            guard case .error(let reply) = try CXReply(decoding: body) else {
                Issue.record("expected an error answer, got \(body.count) bytes")
                return
            }
            #expect(reply.code == .busy)
            #expect(reply.message.contains("limit of 3"))
            let message = try PropertyListDictionary(decoding: body)
            #expect(try message.optionalBool("ok") == false, "msg/1 clients read it as a refusal too")
            // The lab's own client reads the refusal, sent before any request, as its first answer.
            let client = try await endpoint.connect(recorder: &none)
            let answer = try await client.request(try HostileInputTests.validRequest(), recorder: &none)
            guard case .error(let clientReply) = try CXReply(decoding: answer) else {
                Issue.record("the lab's client did not get the busy answer: \(answer.count) bytes")
                return
            }
            #expect(clientReply.code == .busy)
            await client.close()
            try await HostileInputTests.awaitCloses(server.recording, "busy")
            #expect(server.log.contains("busy"))

            // One held connection closes; once the server has counted that close its place is free
            // (it is freed first), so the next connection is served.
            let peerClosed = server.recording.snapshot().closes["peer-closed", default: 0]
            await held.removeLast().close()
            try await HostileInputTests.awaitCloses(server.recording, "peer-closed", count: peerClosed + 1)
            let connection = try await endpoint.connect(recorder: &none)
            let served = try? await connection.request(try HostileInputTests.validRequest(), recorder: &none)
            await connection.close()
            #expect(served != nil, "a connection is served again once one closed")
            for connection in held { await connection.close() }
        }
    }

    @Test("over TLS, the connection after the limit gets its busy answer once the handshake ends")
    func overTheLimitIsBusyOverTLS() async throws {
        let certificates = try await TestCertificates()
        defer { certificates.cleanUp() }
        let transport = try TLSTransport(
            options: TransportOptions(
                maxConnections: 1,
                tls: TLSSettings(
                    certificateFile: certificates.certificate("server"),
                    privateKeyFile: certificates.key("server"),
                    pin: .certificateFile(certificates.certificate("server"))
                )
            )
        )
        let endpoint = try await transport.serve(TransportConformance.ReversingHandler())
        try await withEndpoint(endpoint) { endpoint in
            var none = NoStepRecorder()
            let held = try await endpoint.connect(recorder: &none)
            #expect(try await held.request([1, 2, 3], recorder: &none) == [3, 2, 1])
            let refused = try await endpoint.connect(recorder: &none)
            let body = try await refused.request([4, 5, 6], recorder: &none)
            #expect(body == Array("busy 1".utf8), "the handler's own busy answer, as it gave it")
            await refused.close()
            await held.close()
        }
    }

    /// A handler that has no busy answer (the protocol's default): its connections over the limit
    /// are closed without a byte.
    struct Silent: FrameHandler {
        func respond<R: StepRecorder>(to body: [UInt8], recorder: inout R) async -> FrameAnswer {
            FrameAnswer(body: body)
        }
    }

    @Test("the busy answer is the handler's: with none, the connection over the limit is closed unanswered")
    func busyAnswerIsTheHandlers() async throws {
        let transport = try TCPTransport(options: TransportOptions(maxConnections: 1))
        let endpoint = try await transport.serve(Silent())
        try await withEndpoint(endpoint) { endpoint in
            var none = NoStepRecorder()
            let held = try await endpoint.connect(recorder: &none)
            #expect(try await held.request([7], recorder: &none) == [7])
            let port = try #require(endpoint.address.flatMap { Int($0.split(separator: ":").last ?? "") })
            let refused = try await RawPeer.run(port: port) { _ in }
            #expect(refused.closedByServer)
            #expect(refused.received.isEmpty, "no protocol's answer from the transport itself")
            await held.close()
        }
    }
}
