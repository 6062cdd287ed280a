import Foundation
import LabCore
import LabNIO
import LabTesting
import LabWire
import Testing

/// The idle timeout is for idle peers (PROTOCOL.md §1): a server slower than the timeout to
/// answer does not cut off the client that waits for it.
struct IdleTimeoutTests {
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
        let idle = TimeSpan.milliseconds(300)
        let recording = ServerRecording()
        let server = try await SocketServer.start(
            handler: SlowHandler(delay: .milliseconds(900)),
            configuration: SocketServer.Configuration(idleTimeout: idle),
            recording: recording
        )
        // The client's own wait is longer than the server's work.
        let transport = try TCPTransport(options: TransportOptions(idleTimeout: .seconds(10)))
        let endpoint = try await transport.remote(host: "127.0.0.1", port: server.port)
        var recorder = StepTimings()
        let connection = try await endpoint.connect(recorder: &recorder)
        for round in 1...2 {
            let answer = try await connection.request([UInt8(round), 2, 3], recorder: &recorder)
            #expect(answer == [UInt8(round), 2, 3])
        }
        #expect(recorder.entries.filter { $0.step == .connect }.count == 1, "the same connection served both")

        // Then silence from the client: the server closes it as idle.
        try await HostileInputTests.awaitCloses(recording, "timedOut")
        await connection.close()
        await server.shutdown()
    }
}
