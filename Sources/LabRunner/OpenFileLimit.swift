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
}
