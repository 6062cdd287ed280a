import CLabDNSSD
import Dispatch
import LabCore
import Logging
import Synchronization

/// A registered DNS-SD service instance, from ``DNSSD/advertise(name:type:port:txt:timeout:)``.
///
/// It stays advertised until ``cancel()`` or until it is released, and survives the daemon:
/// when avahi-daemon goes away (its registrations go with it) the advertisement registers
/// again as soon as the daemon is back, trying after 1 s, then 2 and every 4 s.
public final class Advertisement: Sendable {
    private struct State {
        var operation: ServiceOperation<RegisterEvent>? = nil
        var cancelled = false
        /// Whether the loss of the registration has been reported since it last stood.
        var reportedLoss = false
    }

    private let state = Mutex(State())
    private let registration: Registration
    private let record: [UInt8]

    /// The service type, e.g. `_crypttest._tcp`.
    public let type: String
    /// The advertised port.
    public let port: Int
    /// The advertised TXT records.
    public let txt: [String: String]

    /// The instance name the daemon registered: the requested one, unless another host on the
    /// link holds it, in which case Avahi picks another (e.g. `lab #2`). A name taken on this
    /// host makes `advertise` throw instead.
    public var name: String {
        self.registration.name
    }

    init(registration: Registration, type: String, port: Int, txt: [String: String], record: [UInt8]) {
        self.registration = registration
        self.type = type
        self.port = port
        self.txt = txt
        self.record = record
    }

    deinit {
        self.cancel()
    }

    /// Deregisters the instance (`DNSServiceRefDeallocate`) and stops registering it again;
    /// safe to call more than once.
    public func cancel() {
        let operation = self.state.withLock { state in
            state.cancelled = true
            defer { state.operation = nil }
            return state.operation
        }
        operation?.cancel()
    }

    /// Makes a `DNSServiceRegister` ref for this instance, reporting to `handler`, and keeps
    /// it as the current one. Must run on `DNSSD.queue`.
    func register(
        handler: @escaping @Sendable (ServiceOperation<RegisterEvent>, RegisterEvent) -> Void
    ) throws(LabError) -> ServiceOperation<RegisterEvent> {
        let (name, type, port, record) = (self.registration.name, self.type, self.port, self.record)
        let operation = try ServiceOperation<RegisterEvent>.start(
            "DNSServiceRegister",
            subject: "'\(name)' (\(type))",
            handler: handler,
            create: { context, ref in
                record.withUnsafeBytes { bytes in
                    DNSServiceRegister(
                        &ref,
                        0,
                        0,
                        name,
                        type,
                        DNSSD.domain,
                        nil,
                        UInt16(port).bigEndian,
                        UInt16(bytes.count),
                        bytes.baseAddress,
                        RegisterEvent.reply,
                        context
                    )
                }
            }
        )
        let (keep, previous) = self.state.withLock { state in
            guard !state.cancelled else { return (false, nil as ServiceOperation<RegisterEvent>?) }
            defer { state.operation = operation }
            return (true, state.operation)
        }
        previous?.cancel()
        if !keep { operation.cancel() }
        return operation
    }

    /// The daemon dropped the registration `operation` (it stopped, or restarted): register
    /// again once it is back, the first try after `backoff`. A report about a registration
    /// that is no longer the current one is ignored. Runs on `DNSSD.queue`.
    func lost(_ error: LabError, from operation: ServiceOperation<RegisterEvent>, backoff: Duration = .seconds(1)) {
        let report: Bool? = self.state.withLock { state in
            guard state.operation === operation, !state.cancelled else { return nil }
            defer {
                state.operation = nil
                state.reportedLoss = true
            }
            return !state.reportedLoss
        }
        guard let report else { return }
        operation.cancel()
        if report {
            DNSSD.logger.warning(
                "advertisement \(self.name) lost: \(error.message); registering it again once avahi-daemon is back"
            )
        }
        self.retry(after: backoff)
    }

    private func retry(after delay: Duration) {
        DNSSD.queue.asyncAfter(deadline: .now() + DNSSD.interval(delay)) { [weak self] in
            self?.registerAgain(backoff: delay)
        }
    }

    private func registerAgain(backoff: Duration) {
        guard !self.state.withLock({ $0.cancelled }) else { return }
        do {
            _ = try self.register { [weak self] operation, event in
                guard let self else { return }
                switch event {
                case .registered(let chosen):
                    _ = self.registration.confirm(chosen)
                    self.state.withLock { $0.reportedLoss = false }
                    DNSSD.logger.notice("advertisement \(chosen) (\(self.type)) registered again on port \(self.port)")
                case .failed(let code):
                    // Lost again before or after standing: back off, whatever the reason.
                    self.lost(
                        DNSSD.failure(code, during: "DNSServiceRegister", subject: "'\(self.name)' (\(self.type))"),
                        from: operation,
                        backoff: min(backoff * 2, .seconds(4))
                    )
                }
            }
        } catch {
            // The daemon is not back yet.
            self.retry(after: min(backoff * 2, .seconds(4)))
        }
    }
}

/// The name of a registration, which the daemon may change on a conflict.
final class Registration: Sendable {
    private struct State {
        var name: String
        var confirmed = false
    }

    private let state: Mutex<State>

    init(name: String) {
        self.state = Mutex(State(name: name))
    }

    /// The latest name.
    var name: String {
        self.state.withLock { $0.name }
    }

    /// Records the name the daemon confirmed; returns whether this is the first confirmation.
    func confirm(_ name: String) -> Bool {
        self.state.withLock { state in
            if state.name != name {
                DNSSD.logger.debug("registration \(state.name) is now \(name)")
            }
            state.name = name
            defer { state.confirmed = true }
            return !state.confirmed
        }
    }
}
