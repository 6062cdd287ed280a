import Foundation
import LabBuiltIns
import LabCore
import LabFraming
import LabResults
import LabServer
import LabTestSupport
import LabTransports
import LabWire
import Testing

/// A server that has served a lot has large histograms: its `serverStats` answer must not
/// outgrow the frame limit. Found by `HostileLoadTests` (1,000 clients' exchanges made the
/// answer 69,156 bytes against a limit of 65,536, and the server closed the connection).
@Suite(.tier(.integration)) struct ServerStatsLimitTests {
    static let maxFrameBytes = 8_192

    /// Records a `sign` step whose time the request's bytes give, in group `spread` (or in
    /// `small`, for a one-byte request), and hands `serverStats` requests to the responder.
    struct Handler: FrameHandler {
        let stats: ServerStatsResponder

        func respond<R: StepRecorder>(to body: [UInt8], recorder: inout R) async -> FrameAnswer {
            if let plist = try? PropertyListDictionary(decoding: body), ServerStatsMessage.isRequest(plist) {
                return await self.stats.respond(to: body, recorder: &recorder)
            }
            recorder.record(.sign, nanoseconds: body.reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
            return FrameAnswer(body: [1], group: body.count == 1 ? "small" : "spread")
        }
    }

    @Test("An oversized serverStats answer is refused as tooLarge on an open connection; one group still comes")
    func oversizedStatsAreRefusedNotCut() async throws {
        let recording = ServerRecording()
        let stats = ServerStatsResponder(
            recording: recording,
            provider: ProviderInfo(name: "test", version: "0"),
            transport: "tcp",
            startedAt: Date(),
            maxAnswerBytes: Self.maxFrameBytes
        )
        let server = try await SocketServer.start(
            handler: Handler(stats: stats),
            configuration: SocketServer.Configuration(framing: Framing(maxFrameBytes: Self.maxFrameBytes)),
            recording: recording
        )
        try await withCleanup({ await server.shutdown() }) {
            let endpoint = try await TCPTransport(options: TransportOptions()).remote(host: "127.0.0.1", port: server.port)
            var none = NoStepRecorder()
            let connection = try await endpoint.connect(recorder: &none)
            // 1,500 distinct times, 1 µs to 1.5 ms: as many histogram buckets.
            for index in 0..<1_500 {
                let nanoseconds = UInt32(1_000 + index * 1_009)
                _ = try await connection.request(withUnsafeBytes(of: nanoseconds.bigEndian) { Array($0) }, recorder: &none)
            }
            _ = try await connection.request([7], recorder: &none)

            let whole = try await connection.request(try ServerStatsMessage.request(), recorder: &none)
            #expect(whole.count < 1_024, "a refusal, not the statistics: \(whole.count) bytes")
            let error = #expect(throws: LabError.self) { try ServerStatsMessage.decodeAnswer(whole) }
            #expect(error?.code == .frameTooLarge, "\(String(describing: error))")
            #expect(error?.message.contains("frame limit of \(Self.maxFrameBytes)") == true, "\(String(describing: error))")

            // The same connection, still open: one group's statistics fit.
            let one = try ServerStatsMessage.decodeAnswer(
                try await connection.request(try ServerStatsMessage.request(group: "small"), recorder: &none)
            )
            #expect(one.groups.map(\.name) == ["small"])
            #expect(one.groups.first?.steps.map(\.step) == ["sign"])
            await connection.close()
        }
    }
}
