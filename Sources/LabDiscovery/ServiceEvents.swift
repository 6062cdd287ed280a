import CLabDNSSD

// The C callbacks below are closures without captures at file scope, so they are
// nonisolated; they run on `DNSSD.queue`, inside `DNSServiceProcessResult`, and hand a Swift
// value to the `ServiceOperation` passed as their context.

/// What `DNSServiceRegister` reports.
enum RegisterEvent: ServiceEvent {
    /// The daemon established the service under `name` (Avahi renames on a conflict).
    case registered(name: String)
    case failed(DNSServiceErrorType)

    /// The `DNSServiceRegisterReply` callback.
    static let reply: DNSServiceRegisterReply = { _, _, errorCode, name, _, _, context in
        guard let operation = ServiceOperation<RegisterEvent>.from(context) else { return }
        if errorCode == DNSSD.noError, let name {
            operation.deliver(.registered(name: String(cString: name)))
        } else {
            operation.deliver(.failed(errorCode == DNSSD.noError ? DNSSD.unknownError : errorCode))
        }
    }
}

/// What `DNSServiceBrowse` reports.
enum BrowseEvent: ServiceEvent {
    case added(ServiceInstance)
    case removed(ServiceInstance)
    case failed(DNSServiceErrorType)

    /// The `DNSServiceBrowseReply` callback.
    static let reply: DNSServiceBrowseReply = { _, flags, interfaceIndex, errorCode, name, type, domain, context in
        guard let operation = ServiceOperation<BrowseEvent>.from(context) else { return }
        guard errorCode == DNSSD.noError, let name, let type, let domain else {
            operation.deliver(.failed(errorCode == DNSSD.noError ? DNSSD.unknownError : errorCode))
            return
        }
        let instance = ServiceInstance(
            name: String(cString: name),
            type: String(cString: type),
            domain: String(cString: domain),
            interfaceIndex: interfaceIndex
        )
        let added = flags & DNSServiceFlags(kDNSServiceFlagsAdd) != 0
        operation.deliver(added ? .added(instance) : .removed(instance))
    }
}

/// A `DNSServiceResolve` answer.
struct ResolveReply: Sendable {
    /// The escaped full name, e.g. `lab\032one._crypttest._tcp.local.`.
    var fullName: String
    /// The target host, e.g. `vm.local.`.
    var host: String
    var port: Int
    var txt: [String: String]
    var interfaceIndex: UInt32
}

/// What `DNSServiceResolve` reports.
enum ResolveEvent: ServiceEvent {
    case resolved(ResolveReply)
    case failed(DNSServiceErrorType)

    /// The `DNSServiceResolveReply` callback.
    static let reply: DNSServiceResolveReply = {
        _,
        _,
        interfaceIndex,
        errorCode,
        fullName,
        host,
        port,
        txtLength,
        txt,
        context in
        guard let operation = ServiceOperation<ResolveEvent>.from(context) else { return }
        guard errorCode == DNSSD.noError, let fullName, let host else {
            operation.deliver(.failed(errorCode == DNSSD.noError ? DNSSD.unknownError : errorCode))
            return
        }
        let bytes = txt.map { Array(UnsafeBufferPointer(start: $0, count: Int(txtLength))) } ?? []
        let reply = ResolveReply(
            fullName: String(cString: fullName),
            host: String(cString: host),
            // dns_sd hands the port over in network byte order.
            port: Int(UInt16(bigEndian: port)),
            txt: TXTRecord.decode(bytes),
            interfaceIndex: interfaceIndex
        )
        operation.deliver(.resolved(reply))
    }
}

/// What `DNSServiceQueryRecord` for an A record reports.
enum AddressEvent: ServiceEvent {
    /// An IPv4 address, as a dotted quad.
    case added(String)
    case removed(String)
    case failed(DNSServiceErrorType)

    /// The `DNSServiceQueryRecordReply` callback; records other than 4-byte A records are ignored.
    static let reply: DNSServiceQueryRecordReply = {
        _,
        flags,
        _,
        errorCode,
        _,
        type,
        _,
        length,
        data,
        _,
        context in
        guard let operation = ServiceOperation<AddressEvent>.from(context) else { return }
        guard errorCode == DNSSD.noError else {
            operation.deliver(.failed(errorCode))
            return
        }
        guard type == UInt16(kDNSServiceType_A), length == 4, let data else { return }
        let address = UnsafeRawBufferPointer(start: data, count: 4).map(String.init).joined(separator: ".")
        let added = flags & DNSServiceFlags(kDNSServiceFlagsAdd) != 0
        operation.deliver(added ? .added(address) : .removed(address))
    }
}
