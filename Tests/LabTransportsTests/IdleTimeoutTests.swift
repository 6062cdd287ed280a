import Foundation
import LabCore
import LabFraming
import LabTestSupport
import LabTransports
import LabWire
import NIOCore
import NIOPosix
import Synchronization
import Testing

/// The idle timeout is for idle peers (docs/protocol.md §1): a server slower than the timeout to
/// answer does not cut off the client that waits for it.
///
/// The peer here is raw NIO on the event loop: it sends its request the moment it connects and
/// notes when the answer and the close come, on NIO's own threads. The lab's client would
/// send from a task of Swift's pool, and another suite of the pass that keeps that pool's
/// threads busy (an in-process run's key generation, say) could hold the request back past
/// the idle timeout: the server then rightly closes an idle connection, and the test reads it
/// as a broken promise (2 of 2 runs on another machine, and here with two builds beside the
/// pass). Only the server's answer still waits for the pool, and only its arrival is awaited.
@Suite(.tier(.integration)) struct IdleTimeoutTests {
    /// Answers after `delay`, echoing the body.
    struct SlowHandler: FrameHandler {
        let delay: Duration

        func respond<R: StepRecorder>(to body: [UInt8], recorder: inout R) async -> FrameAnswer {
            try? await Task.sleep(for: self.delay)
            return FrameAnswer(body: body)
        }
    }

    /// Sends one framed request when the connection opens; records the answer and the close,
    /// each with when it came.
    final class OneRequestPeer: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer

        struct Timeline: Sendable {
            var sent: UInt64? = nil
            var answer: [UInt8]? = nil
            var answered: UInt64? = nil
            var closed: UInt64? = nil
        }

        let request: [UInt8]
        let timeline = Mutex(Timeline())
        private let parser = Mutex(FrameParser())
        let answered: EventLoopPromise<Void>
        let closed: EventLoopPromise<Void>

        init(request: [UInt8], eventLoop: any EventLoop) {
            self.request = request
            self.answered = eventLoop.makePromise()
            self.closed = eventLoop.makePromise()
        }

        func channelActive(context: ChannelHandlerContext) {
            self.timeline.withLock { $0.sent = Stopwatch.now() }
            let frame = (try? Framing.standard.frame(self.request)) ?? []
            context.writeAndFlush(self.wrapOutboundOut(ByteBuffer(bytes: frame)), promise: nil)
            context.fireChannelActive()
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let bytes = Array(self.unwrapInboundIn(data).readableBytesView)
            let frame = self.parser.withLock { parser -> [UInt8]? in
                parser.append(bytes)
                return try? parser.nextFrame()
            }
            guard let frame else { return }
            let first = self.timeline.withLock { timeline -> Bool in
                guard timeline.answer == nil else { return false }
                timeline.answer = frame
                timeline.answered = Stopwatch.now()
                return true
            }
            if first { self.answered.succeed() }
        }

        func channelInactive(context: ChannelHandlerContext) {
            let unanswered = self.timeline.withLock { timeline -> Bool in
                timeline.closed = Stopwatch.now()
                return timeline.answer == nil
            }
            // Closed before any answer: the wait for the answer ends too (and finds none).
            if unanswered { self.answered.succeed() }
            self.closed.succeed()
            context.fireChannelInactive()
        }
    }

    @Test("An answer that takes longer than the idle timeout still arrives; a silent peer is still dropped")
    func serverWorkIsNotPeerIdleness() async throws {
        let idle = TimeSpan.seconds(2)
        // Twice the idle timeout and more: two idle periods pass with the answer in flight.
        let delay = Duration.milliseconds(4_500)
        let recording = ServerRecording()
        let server = try await SocketServer.start(
            handler: SlowHandler(delay: delay),
            configuration: SocketServer.Configuration(idleTimeout: idle),
            recording: recording
        )
        try await withCleanup({ await server.shutdown() }) {
            let eventLoop = MultiThreadedEventLoopGroup.singleton.next()
            let peer = OneRequestPeer(request: [1, 2, 3], eventLoop: eventLoop)
            let channel = try await ClientBootstrap(group: eventLoop)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(peer) }
                }
                .connect(host: "127.0.0.1", port: server.port)
                .get()
            // Bounds for a test that must not hang, not the property: the server's answer waits
            // for Swift's pool, which the pass's other suites may keep busy.
            let answered = peer.answered.futureResult
            try await withDeadline(.seconds(120), "the answer") { try await answered.get() }
            let afterAnswer = peer.timeline.withLock { $0 }
            #expect(afterAnswer.answer == [1, 2, 3], "answered, not closed as idle: \(afterAnswer)")
            let sent = try #require(afterAnswer.sent)
            let answeredAt = try #require(afterAnswer.answered)
            #expect(
                answeredAt &- sent >= UInt64(delay.components.seconds) * 1_000_000_000,
                "the answer took the handler's time, over the idle timeout"
            )

            // Then silence from the peer: the server closes it as idle, an idle period after its
            // answer (the clock restarts when an answer goes out).
            let closedFuture = peer.closed.futureResult
            try await withDeadline(.seconds(120), "the idle close") { try await closedFuture.get() }
            let closedAt = try #require(peer.timeline.withLock { $0.closed })
            #expect(closedAt &- answeredAt >= idle.nanoseconds - 50_000_000, "closed an idle period after the answer")
            try await withDeadline(.seconds(120), "the server's count of the close") {
                await recording.closes(["timedOut"], reaching: 1)
            }
            try? await channel.close()
        }
    }
}
