import Logging
import Synchronization

/// The log of an event a peer can cause as often as it likes (a failed TLS handshake, garbage
/// after one, a metrics connection taken out or closed): the first and every 1,000th at
/// `level`, the others at debug, each with the count so far. A peer repeating it a million
/// times costs the log a thousand lines, not a million, and the count says how many there were.
final class OccasionalLog: Sendable {
    /// One line in this many at `level`.
    static let every = 1_000

    private let level: Logger.Level
    private let countKey: String
    private let count = Atomic<Int>(0)

    /// Logs at `level`, counting under `countKey` (e.g. "TLS failures so far").
    init(level: Logger.Level = .warning, countKey: String) {
        self.level = level
        self.countKey = countKey
    }

    /// Counts one, and logs `message` with `metadata` and the count: at `level` if it is the
    /// first or a 1,000th, else at debug. Returns the count.
    @discardableResult
    func log(_ message: @autoclosure () -> Logger.Message, metadata: Logger.Metadata = [:], to logger: Logger) -> Int {
        let count = self.count.add(1, ordering: .relaxed).newValue
        var metadata = metadata
        metadata[self.countKey] = "\(count)"
        logger.log(
            level: count == 1 || count % Self.every == 0 ? self.level : .debug,
            message(),
            metadata: metadata
        )
        return count
    }
}
