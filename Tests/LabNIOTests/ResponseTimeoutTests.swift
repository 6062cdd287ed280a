import LabCore
import LabNIO
import LabTesting
import Synchronization
import Testing

/// The client's response timeout (the transport's idle timeout): a request with no answer
/// fails with `timedOut`, counted from when that request was sent, not from an earlier one,
/// and the connection reopens for the next request.
struct ResponseTimeoutTests {
    /// Echoes at once, except for bodies starting with 0xFF, which it never answers in time.
    struct StallingEcho: FrameHandler {
        func respond<R: StepRecorder>(to body: [UInt8], recorder: inout R) async -> FrameAnswer {
            if body.first == 0xFF { try? await Task.sleep(for: .seconds(30)) }
            return FrameAnswer(body: body)
        }
    }

    @Test("A request with no answer fails with timedOut, timed from its own start; the next request reconnects")
    func unansweredRequestTimesOut() async throws {
        let server = try await SocketServer.start(
            handler: StallingEcho(),
            configuration: SocketServer.Configuration(idleTimeout: .seconds(60))
        )
        let timeout = TimeSpan.milliseconds(400)
        let transport = try TCPTransport(options: TransportOptions(idleTimeout: timeout))
        let endpoint = try await transport.remote(host: "127.0.0.1", port: server.port)
        var recorder = StepTimings()
        let connection = try await endpoint.connect(recorder: &recorder)

        // Answered requests leave the connection's timer with nothing to time.
        for index in 0..<3 {
            #expect(try await connection.request([UInt8(index)], recorder: &recorder) == [UInt8(index)])
        }
        // Half a timeout later, a request that gets no answer: its own deadline counts, so it
        // fails no sooner than a whole timeout after it was sent.
        try await Task.sleep(for: .milliseconds(200))
        let clock = ContinuousClock()
        let sent = clock.now
        do {
            _ = try await connection.request([0xFF], recorder: &recorder)
            Issue.record("a request without an answer returned")
        } catch let error as LabError {
            #expect(error.code == .timedOut, "\(error)")
        }
        let waited = clock.now - sent
        #expect(waited >= .milliseconds(400), "failed after \(waited)")
        #expect(waited < .seconds(20), "failed after \(waited)")

        // The timed-out connection was closed; the next request opens another and is answered.
        let connects = recorder.entries.filter { $0.step == .connect }.count
        #expect(try await connection.request([7], recorder: &recorder) == [7])
        #expect(recorder.entries.filter { $0.step == .connect }.count == connects + 1)
        await connection.close()
        await server.shutdown()
    }
}
