import Foundation
import LabCore
import LabNIO
import LabTesting
import LabWire
import Testing

/// The idle timeout is for idle peers (docs/protocol.md §1): a server slower than the timeout to
/// answer does not cut off the client that waits for it.
@Suite(.tier(.integration)) struct IdleTimeoutTests {
    /// Answers after `delay`, echoing the body.
    struct SlowHandler: FrameHandler {
        let delay: Duration

        func respond<R: StepRecorder>(to body: [UInt8], recorder: inout R) async -> FrameAnswer {
            try? await Task.sleep(for: self.delay)
            return FrameAnswer(body: body)
        }
    }

    @Test("An answer that takes longer than the idle timeout still arrives; a silent peer is still dropped")
    func serverWorkIsNotPeerIdleness() async throws {
        let idle = TimeSpan.seconds(2)
        let recording = ServerRecording()
        let server = try await SocketServer.start(
            handler: SlowHandler(delay: .milliseconds(4500)),
            configuration: SocketServer.Configuration(idleTimeout: idle),
            recording: recording
        )
        try await withCleanup({ await server.shutdown() }) {
            // The client's own wait is longer than the server's work; the idle timeout leaves a loaded
            // machine two seconds between connecting and sending the request (with one second, a
            // loaded CI pass once had the server close first, and the client reconnected).
            let transport = try TCPTransport(options: TransportOptions(idleTimeout: .seconds(10)))
            let endpoint = try await transport.remote(host: "127.0.0.1", port: server.port)
            var recorder = StepTimings()
            let connection = try await endpoint.connect(recorder: &recorder)
            // One request: what the client does after the answer is its own business (a second
            // request would race the idle timeout on a loaded machine, rightly so).
            let answer = try await connection.request([1, 2, 3], recorder: &recorder)
            #expect(answer == [1, 2, 3])
            #expect(recorder.entries.filter { $0.step == .connect }.count == 1, "answered on the first connection")

            // Then silence from the client: the server closes it as idle.
            try await HostileInputTests.awaitCloses(recording, "timedOut")
            await connection.close()
        }
    }
}
