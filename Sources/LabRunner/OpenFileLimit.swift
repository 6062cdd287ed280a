import Foundation
import LabCore

#if canImport(Glibc)
import Glibc
#endif

/// The process's limit on open files (`RLIMIT_NOFILE`), which caps how many sockets a run
/// can hold: the soft limit is raised to the hard one, and a run that needs more than the
/// hard limit is refused before it starts instead of failing with EMFILE halfway.
public enum OpenFileLimit {
    /// Files kept for everything but the clients' sockets.
    public static let margin: UInt64 = 256

    /// Raises the soft limit to the hard limit; returns both as they are then.
    @discardableResult
    public static func raise() -> (soft: UInt64, hard: UInt64) {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return (0, 0) }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return (UInt64(limit.rlim_cur), UInt64(limit.rlim_max))
    }

    /// Raises the soft limit, and throws if even the hard limit is below `needed` open files.
    public static func require(_ needed: UInt64) throws {
        let (soft, hard) = Self.raise()
        guard needed > soft else { return }
        throw LabError(
            .unsupported,
            "This run needs about \(needed) open files (a socket per client connection, plus \(Self.margin) for the rest), but this process may open at most \(soft) (RLIMIT_NOFILE: soft \(soft), hard \(hard)); raise the hard limit (as root: `ulimit -Hn \(needed)`, or LimitNOFILE= for a service), or run fewer clients per process (`lab run --shard K/N`)"
        )
    }

    /// Descriptors a server keeps for everything but its connections: the ones open at
    /// start (stdio, SQLite, the event loops' epoll and event descriptors, the listener),
    /// the `busy` refusals in flight (64), the metrics listener's connections (16), and a
    /// margin for files opened for a moment (the report, `/proc` reads).
    public static func serverReserve(openNow: Int) -> Int { openNow + 64 + 17 + 48 }

    /// Descriptors this process has open now (`/proc/self/fd`), or nil where that cannot be read.
    public static func openNow() -> Int? {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")).map { max(0, $0.count - 1) }
    }

    /// The connection limit that fits `soft` open files: `asked`, or less when the files
    /// cannot hold that many connections beside the server's `reserve` (at least 1).
    public static func connectionsFitting(asked: Int, soft: UInt64, reserve: Int) -> Int {
        let room = Int(clamping: soft) - reserve
        return max(1, min(asked, room))
    }
}
