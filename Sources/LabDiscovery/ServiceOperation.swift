import CLabDNSSD
import Dispatch
import LabCore
import Synchronization

/// What a `DNSServiceRef`'s callback reports. `failed` also carries the errors of
/// `DNSServiceProcessResult`.
protocol ServiceEvent: Sendable {
    static func failed(_ code: DNSServiceErrorType) -> Self
}

/// Something a ``Session`` stops when it ends.
protocol Cancellable: AnyObject, Sendable {
    /// Stops it; safe to call more than once and from any thread.
    func cancel()
}

/// A `DNSServiceRef` handed to the read source's handlers.
///
/// `@unchecked` because `OpaquePointer` is not `Sendable`: the pointer is only used on
/// `DNSSD.queue`, by the handlers of one serial read source.
struct ServiceRefHandle: @unchecked Sendable {
    let raw: DNSServiceRef
}

/// A dispatch read source kept by a ``ServiceOperation``.
///
/// `@unchecked` because swift-corelibs-libdispatch does not mark sources `Sendable`; the only
/// call made on it off the queue is `cancel()`, which dispatch allows from any thread.
struct ReadSource: @unchecked Sendable {
    let source: any DispatchSourceRead
}

/// One running `DNSServiceRef`, driven without a thread of its own.
///
/// Its socket (`DNSServiceRefSockFD`) is watched by a read source on the serial `DNSSD.queue`,
/// which calls `DNSServiceProcessResult` when it is readable; the C callbacks therefore run on
/// that queue. The ref is deallocated exactly once, by the source's cancel handler, which
/// dispatch runs after the last event handler: never while `DNSServiceProcessResult` runs.
/// The operation is the callback's context (retained until then), so it lives until
/// ``cancel()``.
final class ServiceOperation<Event: ServiceEvent>: Cancellable {
    private enum State {
        case starting
        case running(ReadSource)
        case cancelled
    }

    /// The dns_sd call that made the ref, e.g. `DNSServiceBrowse`, for messages.
    let call: String
    private let handler: @Sendable (ServiceOperation<Event>, Event) -> Void
    private let state = Mutex<State>(.starting)

    private init(call: String, handler: @escaping @Sendable (ServiceOperation<Event>, Event) -> Void) {
        self.call = call
        self.handler = handler
    }

    /// Makes the ref with `create` (given the context pointer for the callback) and starts
    /// watching it. Must run on `DNSSD.queue`; `handler` runs there too, with each event.
    static func start(
        _ call: String,
        subject: String,
        handler: @escaping @Sendable (ServiceOperation<Event>, Event) -> Void,
        create: (_ context: UnsafeMutableRawPointer, _ ref: inout DNSServiceRef?) -> DNSServiceErrorType
    ) throws(LabError) -> ServiceOperation<Event> {
        dispatchPrecondition(condition: .onQueue(DNSSD.queue))
        let operation = ServiceOperation(call: call, handler: handler)
        let context = Unmanaged.passRetained(operation)
        var ref: DNSServiceRef?
        let code = create(context.toOpaque(), &ref)
        guard code == DNSSD.noError, let ref else {
            context.release()
            throw DNSSD.failure(code, during: call, subject: subject)
        }
        let descriptor = DNSServiceRefSockFD(ref)
        guard descriptor >= 0 else {
            DNSServiceRefDeallocate(ref)
            context.release()
            throw DNSSD.failure(DNSSD.unknownError, during: "DNSServiceRefSockFD", subject: subject)
        }
        let handle = ServiceRefHandle(raw: ref)
        let source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: DNSSD.queue)
        source.setEventHandler {
            let code = DNSServiceProcessResult(handle.raw)
            if code != DNSSD.noError {
                // The ref is unusable (its worker thread or the daemon went away); stop
                // watching it so that a socket left readable cannot spin.
                operation.cancel()
                operation.deliver(.failed(code))
            }
        }
        source.setCancelHandler {
            DNSServiceRefDeallocate(handle.raw)
            Unmanaged.passUnretained(operation).release()
        }
        let cancelledEarly = operation.state.withLock { state in
            guard case .starting = state else { return true }
            state = .running(ReadSource(source: source))
            return false
        }
        source.resume()
        if cancelledEarly { source.cancel() }
        return operation
    }

    /// The operation whose retained pointer `context` is (in a C callback).
    static func from(_ context: UnsafeMutableRawPointer?) -> ServiceOperation<Event>? {
        guard let context else { return nil }
        return Unmanaged<ServiceOperation<Event>>.fromOpaque(context).takeUnretainedValue()
    }

    /// Hands a callback's event to the handler.
    func deliver(_ event: Event) {
        self.handler(self, event)
    }

    /// Stops watching the ref and deallocates it (on the queue, after any running handler).
    func cancel() {
        self.state.withLock { state in
            if case .running(let running) = state {
                running.source.cancel()
            }
            state = .cancelled
        }
    }
}
