import CLabDNSSD
import Dispatch
import LabCore
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// DNS-SD (docs/protocol.md §3) through the Bonjour-compatible `dns_sd` API (Avahi's on Linux),
/// driven from Swift concurrency.
///
/// No thread is blocked per call: every `DNSServiceRef`'s socket is watched by a dispatch read
/// source on one serial queue, where the C callbacks run. Avahi needs `avahi-daemon` (and the
/// D-Bus system bus); `scripts/services.sh` starts both.
public enum DNSSD {
    /// The service type of lab servers.
    public static let defaultType = "_crypttest._tcp"

    /// The only domain the lab uses.
    public static let domain = "local."

    /// Registers the service instance `name` of `type` in `local.` on `port`, with the TXT
    /// records `txt`, and returns once the daemon confirmed it.
    ///
    /// The instance stays advertised until ``Advertisement/cancel()`` (or until the
    /// advertisement is released). Avahi picks another name on a conflict with another host;
    /// see ``Advertisement/name``.
    ///
    /// - Throws: `LabError` `.invalidScenario` for a bad name, type, port or TXT record,
    ///   `.discoveryFailed` if the daemon cannot be reached or refuses (a name already
    ///   registered on this host), and `.discoveryTimeout` if it does not confirm within `timeout`.
    public static func advertise(
        name: String,
        type: String = defaultType,
        port: Int,
        txt: [String: String] = [:],
        timeout: Duration = .seconds(5)
    ) async throws -> Advertisement {
        try Self.checkInstanceName(name)
        try Self.checkTimeout(timeout)
        guard (1...65535).contains(port) else {
            throw LabError(.invalidScenario, "Cannot advertise '\(name)' on port \(port): a port is 1...65535")
        }
        let record = try TXTRecord.encode(txt)
        Self.silenceCompatibilityWarning()

        let registration = Registration(name: name)
        let advertisement = Advertisement(registration: registration, type: type, port: port, txt: txt, record: record)
        let session = Session<Advertisement>()
        let subject = "'\(name)' (\(type))"
        // Kept alive here until the session ends: the handlers hold it weakly.
        defer { withExtendedLifetime(advertisement) {} }
        return try await session.run(
            timeout: timeout,
            onTimeout: {
                LabError(
                    .discoveryTimeout,
                    "avahi-daemon did not confirm the registration of \(subject) within \(timeout); "
                        + "is it running and working? scripts/services.sh starts it"
                )
            },
            start: { () throws(LabError) in
                // Weak: the advertisement keeps the operation, which keeps this handler.
                let operation = try advertisement.register { [weak advertisement] operation, event in
                    guard let advertisement else { return }
                    switch event {
                    case .registered(let chosen):
                        guard registration.confirm(chosen) else { return }
                        session.untrack(operation)
                        if session.finish(.success(advertisement)) {
                            Self.logger.debug("registered \(chosen) (\(type)) on port \(port)")
                        }
                    case .failed(let code):
                        let error = Self.failure(code, during: "DNSServiceRegister", subject: subject)
                        // After the first confirmation, a failure is the daemon going away.
                        if !session.finish(.failure(error)) { advertisement.lost(error, from: operation) }
                    }
                }
                session.track(operation)
            }
        )
    }

    /// Browses for `type` in `local.`, takes the first instance (or the one named `name`),
    /// resolves it (host, port, TXT) and looks up its IPv4 address (the host's A record).
    ///
    /// `timeout` bounds the whole search.
    ///
    /// - Throws: `LabError` `.discoveryTimeout` naming the type (and name) and the step that
    ///   did not complete if nothing is found before `timeout`, `.discoveryFailed` if the
    ///   daemon cannot be reached or fails, and `.invalidScenario` for a bad type or name.
    public static func discover(
        type: String = defaultType,
        name: String? = nil,
        timeout: Duration = .seconds(5)
    ) async throws -> ResolvedService {
        if let name { try Self.checkInstanceName(name) }
        try Self.checkTimeout(timeout)
        Self.silenceCompatibilityWarning()

        let session = Session<ResolvedService>()
        let search = Search(type: type, name: name, session: session)
        return try await session.run(
            timeout: timeout,
            onTimeout: { search.timeoutError(after: timeout) },
            start: { () throws(LabError) in try search.start() }
        )
    }
}

extension DNSSD {
    /// The serial queue where every ref's socket is watched and every callback runs.
    static let queue = DispatchQueue(label: "lab.discovery")

    static let logger = Logger(label: "lab.discovery")

    /// Sets `AVAHI_COMPAT_NOWARN=1` (unless set) before the first dns_sd call, or Avahi's
    /// compatibility layer prints a warning about itself on stderr.
    static func silenceCompatibilityWarning() {
        _ = Self.compatibilityWarningSilenced
    }

    private static let compatibilityWarningSilenced: Void = {
        setenv("AVAHI_COMPAT_NOWARN", "1", 0)
    }()

    /// `timeout` for `DispatchQueue.asyncAfter` (at most about three years).
    static func interval(_ timeout: Duration) -> DispatchTimeInterval {
        let (seconds, attoseconds) = timeout.components
        let nanoseconds = Double(seconds) * 1e9 + Double(attoseconds) / 1e9
        return .nanoseconds(Int(min(max(nanoseconds, 0), 1e17)))
    }

    private static func checkTimeout(_ timeout: Duration) throws(LabError) {
        guard timeout > .zero else {
            throw LabError(.invalidScenario, "A DNS-SD timeout must be positive, not \(timeout)")
        }
    }

    /// DNS-SD instance names are 1 to 63 bytes of UTF-8 (RFC 6763 §4.1.1).
    private static func checkInstanceName(_ name: String) throws(LabError) {
        guard (1...63).contains(name.utf8.count) else {
            throw LabError(
                .invalidScenario,
                "The DNS-SD instance name '\(name)' must be 1 to 63 bytes of UTF-8 (it has \(name.utf8.count))"
            )
        }
    }
}
