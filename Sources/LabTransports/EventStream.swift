import LabCore
public import NIOCore
import NIOHTTP1
import Synchronization

/// A server-sent event stream (`text/event-stream`) for `MetricsEndpoint`: every event sent so
/// far goes to a connection when it subscribes, then each new one as it is sent; `finish()`
/// sends a last `end` event and closes every connection, and each one that subscribes later
/// gets the whole stream and is closed at once. `lab run --live` sends one event a second, so
/// the history a late browser catches up with stays small (a JSON line a second).
public final class EventStream: Sendable {
    private struct State {
        var events: [String] = []
        var subscribers: [ObjectIdentifier: any Channel] = [:]
        var finished = false
    }

    private let state = Mutex(State())

    /// An empty stream.
    public init() {}

    /// Sends `data` (one line, JSON say) as an unnamed event to every connection.
    public func send(_ data: String) {
        let event = "data: \(Self.oneLine(data))\n\n"
        // Written under the lock, so that no connection gets an event before the history a
        // subscription is writing (a write off the event loop only queues it).
        self.state.withLock { state in
            guard !state.finished else { return }
            state.events.append(event)
            for channel in state.subscribers.values { Self.write(event, to: channel) }
        }
    }

    /// Sends the `end` event with `data`, and closes every connection; later subscribers get
    /// the stream and the end at once. Returns once every connection has its end and is
    /// closed, or after `timeout` (a page that does not read is not waited for): a process
    /// that ends right after must not cut the end off (Chromium: ERR_INCOMPLETE_CHUNKED_ENCODING).
    public func finish(_ data: String = "{}", waitingAtMost timeout: TimeAmount = .seconds(2)) async {
        let event = "event: end\ndata: \(Self.oneLine(data))\n\n"
        let closing = self.state.withLock { state -> [EventLoopFuture<Void>] in
            guard !state.finished else { return [] }
            state.finished = true
            state.events.append(event)
            let closing = state.subscribers.values.map { Self.write(event, to: $0, thenClose: true) }
            state.subscribers = [:]
            return closing
        }
        guard let loop = closing.first?.eventLoop else { return }
        let done = Once()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            done.set(continuation)
            EventLoopFuture.andAllComplete(closing, on: loop).whenComplete { _ in done.resume() }
            loop.scheduleTask(in: timeout) { done.resume() }
        }
    }

    /// A continuation resumed once, by whichever comes first.
    private final class Once: Sendable {
        private let continuation = Mutex<CheckedContinuation<Void, Never>?>(nil)
        func set(_ continuation: CheckedContinuation<Void, Never>) { self.continuation.withLock { $0 = continuation } }
        func resume() { self.continuation.withLock { $0.take() }?.resume() }
    }

    /// How many connections are subscribed now.
    public var subscriberCount: Int { self.state.withLock { $0.subscribers.count } }

    /// Answers `head` on `channel` with the stream: the response head, every event so far, then
    /// the rest as they come. On the channel's event loop.
    func subscribe(_ channel: any Channel, version: HTTPVersion) {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "text/event-stream; charset=utf-8")
        headers.add(name: "Cache-Control", value: "no-cache")
        let id = ObjectIdentifier(channel)
        self.state.withLock { state in
            channel.write(
                HTTPServerResponsePart.head(HTTPResponseHead(version: version, status: .ok, headers: headers)),
                promise: nil
            )
            Self.write(state.events.joined(), to: channel, thenClose: state.finished)
            if !state.finished { state.subscribers[id] = channel }
        }
        channel.closeFuture.whenComplete { _ in
            _ = self.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
    }

    /// Writes `text`; with `thenClose`, the response's end too, then closes. The future
    /// completes when the connection is closed (at once without `thenClose`).
    @discardableResult
    private static func write(_ text: String, to channel: any Channel, thenClose: Bool = false) -> EventLoopFuture<Void> {
        let buffer = channel.allocator.buffer(string: text)
        guard thenClose else {
            channel.writeAndFlush(HTTPServerResponsePart.body(.byteBuffer(buffer)), promise: nil)
            return channel.eventLoop.makeSucceededVoidFuture()
        }
        channel.write(HTTPServerResponsePart.body(.byteBuffer(buffer)), promise: nil)
        channel.writeAndFlush(HTTPServerResponsePart.end(nil)).whenComplete { _ in channel.close(promise: nil) }
        return channel.closeFuture
    }

    /// An event's data on one line: a newline would end the field.
    private static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).joined(separator: " ")
    }
}
