import Logging
import Synchronization

/// A registered DNS-SD service instance, from ``DNSSD/advertise(name:type:port:txt:timeout:)``.
///
/// It stays advertised until ``cancel()`` or until it is released.
public final class Advertisement: Sendable {
    private let operation: ServiceOperation<RegisterEvent>
    private let registration: Registration

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

    init(
        operation: ServiceOperation<RegisterEvent>,
        registration: Registration,
        type: String,
        port: Int,
        txt: [String: String]
    ) {
        self.operation = operation
        self.registration = registration
        self.type = type
        self.port = port
        self.txt = txt
    }

    deinit {
        self.operation.cancel()
    }

    /// Deregisters the instance (`DNSServiceRefDeallocate`); safe to call more than once.
    public func cancel() {
        self.operation.cancel()
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
