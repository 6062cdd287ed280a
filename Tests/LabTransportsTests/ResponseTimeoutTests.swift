import LabCore
import LabTestSupport
import LabTransports
import NIOCore
import NIOPosix
import Testing

/// The client's response timeout (the transport's idle timeout): a request with no answer
/// fails with `timedOut`, counted from when that request was sent, not from an earlier one,
/// and the connection reopens for the next request.
@Suite(.tier(.integration)) struct ResponseTimeoutTests {
    /// Echoes each u32be-framed body at once on its event loop, except bodies starting with
    /// 0xFF, which it never answers. It runs on NIO's threads alone, so that its answers come
    /// in time even while other tests keep Swift's task threads busy.
    final class StallingEcho: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        private var buffer = ByteBuffer()

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var bytes = self.unwrapInboundIn(data)
            self.buffer.writeBuffer(&bytes)
            while let length = self.buffer.getInteger(at: self.buffer.readerIndex, as: UInt32.self),
                self.buffer.readableBytes >= 4 + Int(length),
                let frame = self.buffer.readSlice(length: 4 + Int(length))
            {
                if frame.getInteger(at: frame.readerIndex + 4, as: UInt8.self) != 0xFF {
                    context.writeAndFlush(self.wrapOutboundOut(frame), promise: nil)
                }
            }
        }
    }

    @Test("A request with no answer fails with timedOut, timed from its own start; the next request reconnects")
    func unansweredRequestTimesOut() async throws {
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(StallingEcho()) }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        // Two seconds: with 400 ms, an echo once took longer while CPU-bound suites and the
        // 200-client socket tests loaded both cores.
        let timeout = TimeSpan.seconds(2)
        let transport = try TCPTransport(options: TransportOptions(idleTimeout: timeout))
        let endpoint = try await transport.remote(host: "127.0.0.1", port: try #require(listener.localAddress?.port))
        var recorder = StepTimings()
        let connection = try await endpoint.connect(recorder: &recorder)

        // Answered requests leave the connection's timer with nothing to time.
        for index in 0..<3 {
            #expect(try await connection.request([UInt8(index)], recorder: &recorder) == [UInt8(index)])
        }
        // Half a timeout later, a request that gets no answer: its own deadline counts, so it
        // fails no sooner than a whole timeout after it was sent.
        try await Task.sleep(for: .seconds(1))
        let clock = ContinuousClock()
        let sent = clock.now
        do {
            _ = try await connection.request([0xFF], recorder: &recorder)
            Issue.record("a request without an answer returned")
        } catch let error as LabError {
            #expect(error.code == .timedOut, "\(error)")
        }
        let waited = clock.now - sent
        #expect(waited >= .seconds(2), "failed after \(waited)")
        #expect(waited < .seconds(20), "failed after \(waited)")

        // The timed-out connection was closed; the next request opens another and is answered
        // (it once met the closing connection, and its timeout, again).
        let connects = recorder.entries.filter { $0.step == .connect }.count
        #expect(try await connection.request([7], recorder: &recorder) == [7])
        #expect(recorder.entries.filter { $0.step == .connect }.count == connects + 1)
        await connection.close()
        try await listener.close()
    }
}
