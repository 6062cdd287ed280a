import Foundation
public import LabCore
import Synchronization

/// The behaviour every transport must have, whatever carries its bytes: one suite that the
/// `in-process`, `tcp` and `tls` transports all pass (`TransportConformanceTests`), and that a
/// transport written outside the lab runs the same way (docs/architecture.md).
///
/// Each check throws a `ConformanceFailure` naming what went wrong.
public enum TransportConformance {
    /// A handler that answers each body reversed, records a `sign` step of the body's length in
    /// nanoseconds, and closes after answering a body that starts with `close`; a connection
    /// over the limit gets `busy <limit>` in ASCII, which no protocol of the lab answers.
    public struct ReversingHandler: FrameHandler {
        /// Bodies seen, across all connections.
        public let seen = Counter()

        /// A handler.
        public init() {}

        /// Reverses `body`.
        public func respond<R: StepRecorder>(to body: [UInt8], recorder: inout R) async -> FrameAnswer {
            self.seen.increment()
            recorder.record(.sign, nanoseconds: UInt64(body.count))
            let close = body.starts(with: Array("close".utf8))
            return FrameAnswer(body: body.reversed(), closeReason: close ? "asked to close" : nil, group: "test")
        }

        /// `busy <limit>`, whatever the limit.
        public func busyAnswer(connectionLimit: Int) -> [UInt8]? { Array("busy \(connectionLimit)".utf8) }
    }

    /// A thread-safe count.
    public final class Counter: Sendable {
        private let value = Atomic<Int>(0)

        /// Zero.
        public init() {}

        /// Adds one.
        public func increment() { self.value.add(1, ordering: .relaxed) }

        /// The count.
        public var count: Int { self.value.load(ordering: .relaxed) }
    }

    /// What went wrong.
    public struct ConformanceFailure: Error, CustomStringConvertible {
        /// The explanation.
        public var description: String
    }

    static func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws {
        if !condition { throw ConformanceFailure(description: message()) }
    }

    /// Bodies of many sizes, up to the frame limit, come back intact, in order, on one
    /// connection; each round trip's bytes are counted as the given step's, whole frames:
    /// the framing's header and the body, each way.
    public static func roundTrips(_ transport: any Transport, maxFrameBytes: Int, framing: FramingStyle) async throws {
        let endpoint = try await transport.serve(ReversingHandler())
        try await withEndpoint(endpoint) { endpoint in
            var setup = StepTimings()
            let connection = try await endpoint.connect(recorder: &setup)
            var random = SystemRandomNumberGenerator()
            for size in [1, 2, 427, 65_535, 65_536, 1 << 20, maxFrameBytes] {
                let body = (0..<size).map { _ in UInt8.random(in: 0...255, using: &random) }
                var recorder = StepTimings()
                let step = Step("probe-\(size)")
                let answer = try await connection.request(body, step: step, recorder: &recorder)
                try expect(answer == body.reversed(), "a \(size)-byte body did not come back reversed")
                let frame = UInt64(framing.headerBytes + size)
                let expected = [step: StepTraffic(roundTrips: 1, sent: frame, received: frame)]
                try expect(recorder.traffic == expected, "a \(size)-byte body counted \(recorder.traffic); expected \(expected)")
            }
            await connection.close()
        }
    }

    /// The server's steps reach the client's recorder, once per request, when the server runs
    /// in this process; a socket `connect` is recorded by network transports only, and the
    /// TLS `handshake` inside it by TLS transports only.
    public static func serverStepsReachTheClient(_ transport: any Transport) async throws {
        let endpoint = try await transport.serve(ReversingHandler())
        try await withEndpoint(endpoint) { endpoint in
            var setup = StepTimings()
            let connection = try await endpoint.connect(recorder: &setup)
            let network = type(of: transport).usesNetwork
            let expected: Set<Step> = network ? (type(of: transport).usesTLS ? [.connect, .handshake] : [.connect]) : []
            try expect(
                setup.steps == expected,
                "connect recorded \(setup.steps.map(\.name)); expected \(expected.map(\.name).sorted())"
            )
            // Only a TLS handshake puts bytes on the wire before the first request: its records.
            let handshake = setup.traffic[.handshake]
            if type(of: transport).usesTLS {
                try expect(
                    setup.traffic.keys.sorted() == [.handshake] && handshake?.roundTrips == 1
                        && (handshake?.sent ?? 0) > 0 && (handshake?.received ?? 0) > 0,
                    "a TLS connect counted \(setup.traffic); expected one handshake's bytes each way"
                )
            } else {
                try expect(setup.traffic.isEmpty, "connect counted \(setup.traffic); expected no bytes")
            }
            for size in 1...5 {
                var recorder = StepTimings()
                _ = try await connection.request(Array(repeating: 7, count: size), recorder: &recorder)
                try expect(
                    recorder.entries.count == 1 && recorder.total(.sign) == UInt64(size),
                    "request \(size): the client's recorder got \(recorder.entries.map { "\($0.step)=\($0.nanoseconds)" })"
                )
            }
            await connection.close()
        }
    }

    /// After an answer with a close reason the server closes the connection. The client
    /// reopens it before its next request (recording `connect` over a socket) or, if it had not
    /// yet seen the close, that request fails with `connectionClosed`; it never gets an answer
    /// on the closed connection.
    public static func reopensAfterServerClose(_ transport: any Transport) async throws {
        let handler = ReversingHandler()
        let endpoint = try await transport.serve(handler)
        try await withEndpoint(endpoint) { endpoint in
            var setup = StepTimings()
            let connection = try await endpoint.connect(recorder: &setup)
            var recorder = StepTimings()
            let answer = try await connection.request(Array("close now".utf8), recorder: &recorder)
            try expect(answer == Array("close now".utf8).reversed(), "the error answer itself must arrive")
            var next = StepTimings()
            do {
                let again = try await connection.request([1, 2, 3], recorder: &next)
                try expect(again == [3, 2, 1], "the reopened connection must answer")
                let network = type(of: transport).usesNetwork
                try expect(
                    next.steps.contains(.connect) == network,
                    "the next request recorded \(next.steps.map(\.name)); a reopened socket records connect"
                )
            } catch let error as LabError {
                try expect(error.code == .connectionClosed, "expected connectionClosed, got \(error)")
                try expect(handler.seen.count == 1, "the server must not have answered on the closed connection")
            }
            let fresh = try await endpoint.connect(recorder: &setup)
            try expect(try await fresh.request([1, 2], recorder: &recorder) == [2, 1], "a new connection must work")
            await fresh.close()
            await connection.close()
            do {
                _ = try await connection.request([1], recorder: &recorder)
                throw ConformanceFailure(description: "a request on a connection the client closed succeeded")
            } catch let error as LabError {
                try expect(error.code == .connectionClosed, "expected connectionClosed after close(), got \(error)")
            }
        }
    }

    /// Many clients at once each get their own answers.
    public static func servesManyAtOnce(_ transport: any Transport, clients: Int, requests: Int) async throws {
        let handler = ReversingHandler()
        let endpoint = try await transport.serve(handler)
        try await withEndpoint(endpoint) { endpoint in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for client in 0..<clients {
                    group.addTask {
                        var recorder = StepTimings()
                        let connection = try await endpoint.connect(recorder: &recorder)
                        for request in 0..<requests {
                            let body = Array("client \(client) request \(request)".utf8)
                            let answer = try await connection.request(body, recorder: &recorder)
                            try expect(answer == body.reversed(), "client \(client) got another client's answer")
                        }
                        await connection.close()
                    }
                }
                try await group.waitForAll()
            }
            try expect(handler.seen.count == clients * requests, "the server saw \(handler.seen.count) requests")
        }
    }

    /// A body over the frame limit is refused by the sender, before anything is sent.
    public static func refusesOversizedBodies(_ transport: any Transport, maxFrameBytes: Int) async throws {
        let handler = ReversingHandler()
        let endpoint = try await transport.serve(handler)
        try await withEndpoint(endpoint) { endpoint in
            var recorder = StepTimings()
            let connection = try await endpoint.connect(recorder: &recorder)
            do {
                _ = try await connection.request(Array(repeating: 1, count: maxFrameBytes + 1), recorder: &recorder)
                throw ConformanceFailure(description: "an oversized body was sent")
            } catch let error as LabError {
                try expect(error.code == .frameTooLarge, "expected frameTooLarge, got \(error)")
            }
            try expect(handler.seen.count == 0, "the server received an oversized body")
            await connection.close()
        }
    }
}
