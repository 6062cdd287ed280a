import LabCore
import LabFraming
import LabWire
import Logging
import NIOCore
import NIOPosix
import Synchronization

/// A socket server's connections: accepting them, refusing those over the limit, serving
/// each one's frames until it ends.
extension SocketServer {
    /// Accepts connections until the listener closes: each admitted one served by a task of
    /// its own, one over the limit given the handler's busy answer.
    static func accept(
        _ listener: NIOAsyncChannel<NIOAsyncChannel<ByteBuffer, ByteBuffer>, Never>,
        handler: any FrameHandler,
        connections: ConnectionSet,
        recording: (any ServerRecorder)?,
        mailbox: ServerStepMailbox?,
        layer: (any ServerChannelLayer)?,
        readsPackets: Bool = false,
        logger: Logger
    ) async {
        do {
            try await withThrowingDiscardingTaskGroup { group in
                try await listener.executeThenClose { inbound in
                    for try await connection in inbound {
                        switch connections.insert(connection.channel) {
                        case .admitted:
                            break
                        case .busy(let limit):
                            recording?.refused(code: "busy")
                            let refusal = connections.startRefusal()
                            if refusal.logged {
                                logger.warning(
                                    "refusing connections: busy",
                                    metadata: ["limit": "\(limit)", "refused so far": "\(refusal.total)"]
                                )
                            }
                            guard refusal.answered else {
                                // Refusals already in flight: close without an answer, so that a
                                // flood of connections cannot hold more sockets this way either.
                                try? await connection.channel.close()
                                continue
                            }
                            group.addTask {
                                await Self.refuseBusy(connection, limit: limit, handler: handler)
                                connections.endRefusal()
                            }
                            continue
                        case .shuttingDown:
                            try? await connection.channel.close()
                            continue
                        }
                        group.addTask {
                            let record = recording?.opened()
                            let closeCode = await Self.serve(
                                connection,
                                handler: handler,
                                connections: connections,
                                record: record,
                                mailbox: mailbox,
                                layer: layer,
                                readsPackets: readsPackets,
                                logger: logger
                            )
                            // The place is free before the close is counted: whoever awaits
                            // the count may connect again at once.
                            connections.remove(connection.channel)
                            record?.closed(code: closeCode)
                        }
                    }
                }
            }
        } catch {
            logger.error("the listener failed", metadata: ["error": "\(error)"])
        }
    }

    /// Sends the handler's `busy` answer (docs/protocol.md §1.4), if it has one, and closes, within
    /// `ConnectionSet.refusalTimeout` (a TLS peer that never finishes its handshake included).
    static func refuseBusy(
        _ connection: NIOAsyncChannel<ByteBuffer, ByteBuffer>,
        limit: Int,
        handler: any FrameHandler
    ) async {
        let channel = connection.channel
        let deadline = channel.eventLoop.scheduleTask(in: ConnectionSet.refusalTimeout) {
            channel.close(promise: nil)
        }
        defer { deadline.cancel() }
        guard let body = handler.busyAnswer(connectionLimit: limit) else {
            try? await channel.close()
            return
        }
        try? await connection.executeThenClose { inbound, _ in
            // The answer, then a close of the output only, in this order on the channel itself
            // (the async writer could let the close overtake the answer); then read until the
            // peer closes (or the deadline). A TLS handler holds both the answer and the close
            // until its handshake ends, where a full close would drop them; and a socket
            // closed with the peer's request unread sends a reset, which can reach the peer
            // before it reads its answer.
            channel.writeAndFlush(ByteBuffer(bytes: body), promise: nil)
            channel.close(mode: .output, promise: nil)
            for try await _ in inbound {}
        }
    }

    /// Serves one connection until it ends; returns why it ended (the close code).
    static func serve(
        _ connection: NIOAsyncChannel<ByteBuffer, ByteBuffer>,
        handler: any FrameHandler,
        connections: ConnectionSet,
        record: (any ConnectionRecorder)?,
        mailbox: ServerStepMailbox?,
        layer: (any ServerChannelLayer)?,
        readsPackets: Bool = false,
        logger: Logger
    ) async -> String {
        var logger = logger
        let peer = connection.channel.remoteAddress
        logger[metadataKey: "peer"] = "\(peer.map { "\($0.ipAddress ?? "?"):\($0.port ?? 0)" } ?? "?")"
        let peerKey = ServerStepMailbox.key(peer)
        let source = FramePeer(source: peer?.ipAddress.map(FramePeer.source(ipAddress:)) ?? "?")
        // Looked up at the first answer (the client opened it before sending) and kept.
        var box: ServerStepMailbox.Box? = nil
        var closeCode = "peer-closed"
        // With `readsPackets`: the counters at the last request's arrival, and its answer's
        // group; what they moved by until the next request arrives is that answer's.
        var lastRead: (counters: TCPCounters, group: String)? = nil
        var countedOpening = false
        do {
            try await connection.executeThenClose { inbound, outbound in
                for try await frame in inbound {
                    // Shutdown drains the connections with a request under way; it closes the others.
                    guard connections.startAnswer(connection.channel) else {
                        closeCode = "shutdown"
                        return
                    }
                    let counters = readsPackets ? try? await TCPInfo.read(connection.channel)?.get() : nil
                    if let counters, let last = lastRead {
                        record?.packets(StepPackets(from: last.counters, to: counters), step: .answer, group: last.group)
                    }
                    // At the first request: everything before it, the SYN's answer and the TLS
                    // handshake's flights, under the first answer's group.
                    let opening = countedOpening ? nil : counters.map { StepPackets(from: TCPCounters(), to: $0) }
                    if opening != nil { countedOpening = true }
                    var timings = StepTimings(readsUsage: mailbox?.readsUsage ?? false)
                    var answer = await handler.respond(
                        to: Array(frame.readableBytesView),
                        from: source,
                        recorder: &timings
                    )
                    let group = answer.group ?? "-"
                    lastRead = counters.map { ($0, group) }
                    if let opening { record?.packets(opening, step: layer == nil ? .connect : .handshake, group: group) }
                    // An error answer is counted whether it closes the connection (cx/1's, by its
                    // reason's code) or not (msg/1's); the steps of one that keeps the
                    // connection open (a wrong password's KDF run) are the server's work too.
                    let errorCode = answer.closeReason.map { String($0.prefix { $0 != ":" }) } ?? answer.errorCode
                    record?.record(
                        answer.closeReason == nil ? timings : StepTimings(),
                        group: group,
                        error: errorCode
                    )
                    if box == nil { box = mailbox?.box(for: peerKey) }
                    box?.deposit(timings)
                    // Held until the kernel takes it: past the server's bound for unread
                    // answers, the connections holding most are closed (this one, if it is).
                    for reader in connections.holdAnswer(connection.channel, bytes: answer.body.count) {
                        reader.close(promise: nil)
                    }
                    // One copy while the write waits for a peer that reads slowly, not two.
                    let body = ByteBuffer(bytes: answer.body)
                    answer.body = []
                    try await outbound.write(body)
                    let staysOpen = connections.endAnswer(connection.channel)
                    if let reason = answer.closeReason {
                        closeCode = errorCode ?? "answered-error"
                        logger.warning(
                            "closing the connection after an error answer",
                            metadata: ["reason": "\(reason)"]
                        )
                        return
                    }
                    guard staysOpen else {
                        closeCode = "shutdown"
                        logger.debug("closing the connection after its answer: the server is shutting down")
                        return
                    }
                }
                logger.debug("the peer closed the connection")
            }
        } catch {
            let cause = connections.closeReason(connection.channel) ?? error
            closeCode = layer?.closeCode(for: cause, logger: logger) ?? Self.closeCode(for: cause, logger: logger)
        }
        return closeCode
    }

    /// The close code of a connection that ended with `error` (the frame codec's `LabError`s
    /// by their code, anything else as `io`; the layer's own errors are the layer's to name),
    /// logged with its reason.
    static func closeCode(for error: any Error, logger: Logger) -> String {
        switch error {
        case let error as LabError:
            logger.warning("closing the connection", metadata: ["reason": "\(error.code): \(error.message)"])
            return error.code.description
        default:
            logger.notice("the connection failed", metadata: ["reason": "\(error)"])
            return "io"
        }
    }
}
