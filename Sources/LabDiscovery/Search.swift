import CLabDNSSD
import LabCore
import Logging
import Synchronization

/// The steps of one `DNSSD.discover`: browse, resolve the chosen instance, query its host's
/// A record. Every step starts and reports on `DNSSD.queue`.
final class Search: Sendable {
    private enum Step {
        case browsing
        case resolving(ServiceInstance)
        case lookingUp(ServiceInstance, ResolveReply)
    }

    let type: String
    let name: String?
    private let session: Session<ResolvedService>
    private let step = Mutex(Step.browsing)

    init(type: String, name: String?, session: Session<ResolvedService>) {
        self.type = type
        self.name = name
        self.session = session
    }

    private var subject: String {
        if let name { return "'\(name)' (\(self.type))" }
        return self.type
    }

    /// Starts browsing.
    func start() throws(LabError) {
        let type = self.type
        let browse = try ServiceOperation<BrowseEvent>.start(
            "DNSServiceBrowse",
            subject: self.subject,
            handler: { operation, event in self.browsed(event, by: operation) },
            create: { context, ref in
                DNSServiceBrowse(&ref, 0, 0, type, DNSSD.domain, BrowseEvent.reply, context)
            }
        )
        self.session.track(browse)
    }

    private func browsed(_ event: BrowseEvent, by operation: ServiceOperation<BrowseEvent>) {
        switch event {
        case .added(let instance):
            DNSSD.logger.debug("found \(instance.name) (\(instance.type)) on interface \(instance.interfaceIndex)")
            guard self.name == nil || self.name == instance.name else { return }
            let chosen = self.step.withLock { step in
                guard case .browsing = step else { return false }
                step = .resolving(instance)
                return true
            }
            guard chosen else { return }
            operation.cancel()
            self.attempt { () throws(LabError) -> any Cancellable in
                try ServiceOperation<ResolveEvent>.start(
                    "DNSServiceResolve",
                    subject: "'\(instance.name)' (\(instance.type))",
                    handler: { operation, event in self.resolved(event, of: instance, by: operation) },
                    create: { context, ref in
                        DNSServiceResolve(
                            &ref,
                            0,
                            instance.interfaceIndex,
                            instance.name,
                            instance.type,
                            instance.domain,
                            ResolveEvent.reply,
                            context
                        )
                    }
                )
            }
        case .removed:
            break
        case .failed(let code):
            self.session.finish(.failure(DNSSD.failure(code, during: "DNSServiceBrowse", subject: self.subject)))
        }
    }

    private func resolved(
        _ event: ResolveEvent,
        of instance: ServiceInstance,
        by operation: ServiceOperation<ResolveEvent>
    ) {
        switch event {
        case .resolved(let reply):
            let first = self.step.withLock { step in
                guard case .resolving = step else { return false }
                step = .lookingUp(instance, reply)
                return true
            }
            guard first else { return }
            operation.cancel()
            DNSSD.logger.debug("resolved \(instance.name) to \(reply.host):\(reply.port)")
            self.attempt { () throws(LabError) -> any Cancellable in
                // Avahi's compatibility library has no DNSServiceGetAddrInfo: ask for the A
                // record of the target host, on the interface the resolve answered on.
                try ServiceOperation<AddressEvent>.start(
                    "DNSServiceQueryRecord",
                    subject: "the A record of \(reply.host)",
                    handler: { operation, event in self.lookedUp(event, by: operation) },
                    create: { context, ref in
                        DNSServiceQueryRecord(
                            &ref,
                            0,
                            reply.interfaceIndex,
                            reply.host,
                            UInt16(kDNSServiceType_A),
                            UInt16(kDNSServiceClass_IN),
                            AddressEvent.reply,
                            context
                        )
                    }
                )
            }
        case .failed(let code):
            let error = DNSSD.failure(code, during: "DNSServiceResolve", subject: "'\(instance.name)' (\(self.type))")
            self.session.finish(.failure(error))
        }
    }

    private func lookedUp(_ event: AddressEvent, by operation: ServiceOperation<AddressEvent>) {
        switch event {
        case .added(let address):
            let found = self.step.withLock { step -> (ServiceInstance, ResolveReply)? in
                guard case .lookingUp(let instance, let reply) = step else { return nil }
                return (instance, reply)
            }
            guard let (instance, reply) = found else { return }
            let service = ResolvedService(
                instance: instance,
                host: reply.host,
                port: reply.port,
                txt: reply.txt,
                addresses: [address]
            )
            if self.session.finish(.success(service)) {
                DNSSD.logger.debug("\(reply.host) is \(address)")
            }
        case .removed:
            break
        case .failed(let code):
            let subject = self.step.withLock { step in
                if case .lookingUp(_, let reply) = step { return "the A record of \(reply.host)" }
                return self.subject
            }
            self.session.finish(.failure(DNSSD.failure(code, during: "DNSServiceQueryRecord", subject: subject)))
        }
    }

    /// Starts the next step, to be cancelled with the session; a failure to start ends it.
    private func attempt(_ start: () throws(LabError) -> any Cancellable) {
        guard !self.session.isFinished else { return }
        do {
            self.session.track(try start())
        } catch {
            self.session.finish(.failure(error))
        }
    }

    /// The error for a search that did not complete within `timeout`, naming the step it was at.
    func timeoutError(after timeout: Duration) -> LabError {
        let step = self.step.withLock { step in step }
        switch step {
        case .browsing:
            let what = self.name.map { "no \(self.type) instance named '\($0)'" } ?? "no \(self.type) instance"
            return LabError(
                .discoveryTimeout,
                "DNS-SD found \(what) in \(DNSSD.domain) within \(timeout); is the server running and "
                    + "advertising? `avahi-browse -rt \(self.type)` lists what avahi-daemon sees"
            )
        case .resolving(let instance):
            return LabError(
                .discoveryTimeout,
                "DNS-SD found '\(instance.name)' (\(self.type)) but could not resolve it within \(timeout)"
            )
        case .lookingUp(let instance, let reply):
            return LabError(
                .discoveryTimeout,
                "DNS-SD resolved '\(instance.name)' (\(self.type)) to \(reply.host):\(reply.port) but found "
                    + "no IPv4 (A) record for \(reply.host) within \(timeout)"
            )
        }
    }
}
