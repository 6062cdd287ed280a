import Logging
import NIOCore
import Synchronization

/// Logs a listener's accept errors (out of descriptors: EMFILE, ENFILE) and passes them on to
/// NIO's `AcceptBackoffHandler`, which waits a second before accepting again. Without the
/// backoff a listener out of descriptors tries again at once, forever, and spins a core;
/// without the log nobody learns why clients time out. Logged the first time, then at most
/// once per `interval` with the count since.
final class AcceptErrorLog: ChannelInboundHandler, Sendable {
    typealias InboundIn = any Channel

    static let interval: UInt64 = 10_000_000_000

    private let logger: Logger
    private let what: String
    private let state = Mutex<(count: Int, logged: UInt64?)>((0, nil))

    init(logger: Logger, what: String) {
        self.logger = logger
        self.what = what
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        let now = NIODeadline.now().uptimeNanoseconds
        let count = self.state.withLock { state -> Int? in
            state.count += 1
            if let last = state.logged, now &- last < Self.interval { return nil }
            defer {
                state.logged = now
                state.count = 0
            }
            return state.count
        }
        if let count {
            self.logger.error(
                "\(self.what): cannot accept connections; waiting 1 s before trying again",
                metadata: ["error": "\(error)", "failures since last logged": "\(count)"]
            )
        }
        context.fireErrorCaught(error)
    }
}
