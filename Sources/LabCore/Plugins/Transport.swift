/// How frames travel between a client and the server: `in-process`, `tcp` or `tls`.
///
/// A transport serves a `FrameHandler` and hands out client connections to it, or reaches a
/// server that runs elsewhere. The runner only sees this protocol, so flows never know
/// whether their bytes cross a socket.
public protocol Transport: Sendable {
    /// The name scenario files use, e.g. `in-process`.
    static var name: String { get }
    /// Whether the transport crosses a socket, so that a server elsewhere can be reached.
    static var usesNetwork: Bool { get }
    /// Whether the transport runs TLS, and so takes the scenario's certificates and pins
    /// (`TransportOptions.tls`).
    static var usesTLS: Bool { get }
    /// The prefix of the outcomes the transport counts on every connection (`tls.` for the
    /// handshake's version, group and cipher), valid in any flow's `outcomes.<name>`
    /// thresholds; nil when it counts none.
    static var outcomePrefix: String? { get }
    /// Makes the transport with the scenario's server settings.
    init(options: TransportOptions) throws
    /// Starts serving `handler`; clients connect through the returned endpoint.
    func serve(_ handler: any FrameHandler) async throws -> any TransportEndpoint
    /// An endpoint for a server already running at `host`:`port`, served by someone else.
    func remote(host: String, port: Int) async throws -> any TransportEndpoint
    /// Starts a server others reach (`lab serve`) at the options' host and port, totalling
    /// what it serves in `recorder`; only transports that cross a socket can.
    func listen(_ handler: any FrameHandler, recorder: (any ServerRecorder)?) async throws -> any ListeningServer
}

extension Transport {
    /// In-memory by default.
    public static var usesNetwork: Bool { false }

    /// Without TLS by default.
    public static var usesTLS: Bool { false }

    /// No outcomes by default.
    public static var outcomePrefix: String? { nil }

    /// Refuses: only network transports serve others.
    public func listen(_ handler: any FrameHandler, recorder: (any ServerRecorder)?) async throws -> any ListeningServer {
        throw LabError(.unsupported, "The '\(Self.name)' transport cannot serve others; use tcp or tls")
    }

    /// Refuses: only network transports reach other servers.
    public func remote(host: String, port: Int) async throws -> any TransportEndpoint {
        throw LabError(
            .unsupported,
            "The '\(Self.name)' transport cannot reach a server at \(host):\(port); use tcp or tls"
        )
    }
}

/// The server settings a transport needs.
public struct TransportOptions: Sendable, Hashable {
    /// How frame lengths are written (docs/protocol.md §1).
    public var framing: FramingStyle
    /// The largest frame body either side accepts.
    public var maxFrameBytes: Int
    /// Where a server started by the lab listens (network transports).
    public var host: String
    /// The port a server started by the lab listens on; 0 picks a free one.
    public var port: Int
    /// How long a server waits for a peer's next bytes before closing the connection.
    public var idleTimeout: TimeSpan
    /// How long one frame may take to arrive at a server, however steadily its bytes trickle.
    public var frameTimeout: TimeSpan
    /// Connections a server serves at once; one more is answered `busy`.
    public var maxConnections: Int
    /// Certificates and pins, for `tls`.
    public var tls: TLSSettings
    /// The bytes that frames still arriving may hold across all of a server's connections
    /// (each counted at the size its header announces); past it the connection whose frame
    /// would pass it is closed, `busy`.
    public var maxBufferedBytes: Int
    /// Whether a server reads its sockets' TCP counters at each request (`lab serve
    /// --packets`): what its answers cost in segments and retransmissions (`StepPackets`).
    public var readsPackets: Bool = false
    /// Whether a server the lab starts in its own process reads each step's thread usage,
    /// as the clients do (`report.stepUsage`): the server's steps then carry their CPU time,
    /// and an exchange's work (`Step.work`) holds both sides'.
    public var readsUsage: Bool = false

    /// The default of `maxBufferedBytes`: 512 MiB, a hundred frames of the default 5 MiB at
    /// once (the adversarial trial's 60 partial frames took 327 MiB with no bound at all).
    public static let defaultMaxBufferedBytes = 512 << 20

    /// The default of `maxConnections`: 10,000 idle clients and room to spare, within the
    /// 20,000 open files a process may have here.
    public static let defaultMaxConnections = 16_384

    /// Options; the protocol's defaults unless given.
    public init(
        framing: FramingStyle = .u32be,
        maxFrameBytes: Int = 5_242_880,
        host: String = "127.0.0.1",
        port: Int = 0,
        idleTimeout: TimeSpan = .seconds(30),
        frameTimeout: TimeSpan = .seconds(30),
        maxConnections: Int = TransportOptions.defaultMaxConnections,
        tls: TLSSettings = TLSSettings(),
        maxBufferedBytes: Int = TransportOptions.defaultMaxBufferedBytes
    ) {
        self.framing = framing
        self.maxFrameBytes = maxFrameBytes
        self.host = host
        self.port = port
        self.idleTimeout = idleTimeout
        self.frameTimeout = frameTimeout
        self.maxConnections = maxConnections
        self.tls = tls
        self.maxBufferedBytes = maxBufferedBytes
    }
}

/// The `tls` transport's identity and trust: what the server presents, what the client pins.
///
/// Paths are absolute by the time a transport sees them (the validator resolves them
/// against the scenario file's folder).
public struct TLSSettings: Sendable, Hashable {
    /// The server's certificate chain (PEM); nil: a fresh self-signed certificate per run.
    public var certificateFile: String?
    /// The server's private key (PEM), with `certificateFile`.
    public var privateKeyFile: String?
    /// What the client trusts; nil: exactly the certificate the lab's own server presents.
    public var pin: CertificatePin?
    /// The key-exchange groups both sides offer (a client in this order; a server accepts the
    /// set, and picks by the client's order); nil: the TLS library's own list.
    public var groups: [TLSGroup]?
    /// The one TLS version both sides speak; nil: 1.2 or 1.3, whichever the peers agree on.
    public var version: TLSVersionChoice?

    /// Settings.
    public init(
        certificateFile: String? = nil,
        privateKeyFile: String? = nil,
        pin: CertificatePin? = nil,
        groups: [TLSGroup]? = nil,
        version: TLSVersionChoice? = nil
    ) {
        self.certificateFile = certificateFile
        self.privateKeyFile = privateKeyFile
        self.pin = pin
        self.groups = groups
        self.version = version
    }
}

/// A TLS key-exchange group (RFC 8446 §4.2.7's NamedGroup), by the name scenarios use.
public struct TLSGroup: Sendable, Hashable, CustomStringConvertible {
    /// The name scenarios and reports use, e.g. `x25519-mlkem768`.
    public let name: String
    /// Its IANA code point.
    public let codePoint: UInt16

    /// X25519 (RFC 7748).
    public static let x25519 = TLSGroup(name: "x25519", codePoint: 0x001D)
    /// NIST P-256.
    public static let secp256r1 = TLSGroup(name: "secp256r1", codePoint: 0x0017)
    /// NIST P-384.
    public static let secp384r1 = TLSGroup(name: "secp384r1", codePoint: 0x0018)
    /// The hybrid post-quantum group: ML-KEM-768 and X25519 (IANA's X25519MLKEM768).
    public static let x25519MLKEM768 = TLSGroup(name: "x25519-mlkem768", codePoint: 0x11EC)

    /// Whether TLS 1.2 cannot use it (the TLS libraries offer post-quantum groups in 1.3 only).
    public var isPostQuantum: Bool { self == .x25519MLKEM768 }

    /// The groups a scenario may name, in the order `lab list` shows them.
    public static let all: [TLSGroup] = [.x25519, .secp256r1, .secp384r1, .x25519MLKEM768]

    /// The group called `name`, if the lab knows it.
    public static func named(_ name: String) -> TLSGroup? { Self.all.first { $0.name == name } }

    /// The name of the group with `codePoint`: a known one's, else `0x` and four hex digits.
    public static func name(of codePoint: UInt16) -> String {
        if let known = Self.all.first(where: { $0.codePoint == codePoint }) { return known.name }
        let hex = String(codePoint, radix: 16)
        return "0x" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    /// The name.
    public var description: String { self.name }
}

/// The TLS version a scenario may hold both sides to.
public enum TLSVersionChoice: String, Sendable, Hashable, CaseIterable {
    /// TLS 1.2 only.
    case tls12 = "1.2"
    /// TLS 1.3 only.
    case tls13 = "1.3"
}

/// The one server identity a pinned client accepts.
public enum CertificatePin: Sendable, Hashable {
    /// A bundled certificate (PEM or DER file): the server must present exactly it.
    case certificateFile(String)
    /// The SHA-256 of the server's SubjectPublicKeyInfo (32 bytes).
    case spkiSHA256([UInt8])
}

/// A server others reach, listening (`Transport.listen`): what `lab serve` runs.
public protocol ListeningServer: Sendable {
    /// The bound host.
    var host: String { get }
    /// The bound port (the one picked, when 0 was asked).
    var port: Int { get }
    /// Lines `lab serve` prints about it after `listening on`, e.g. its TLS certificate's pin.
    var announcement: [String] { get }
    /// Stops accepting and ends every connection; a connection inside its handler may finish
    /// that answer for at most `grace`.
    func shutdown(grace: Duration) async
}

extension ListeningServer {
    /// `host:port`.
    public var address: String { "\(self.host):\(self.port)" }

    /// Nothing to add by default.
    public var announcement: [String] { [] }
}

/// Where a server others reach totals what it served: its steps per group, its answers, and
/// why its connections ended (`lab serve`'s statistics, metrics page and report read it).
public protocol ServerRecorder: Sendable {
    /// A connection was admitted: its answers and its end go to the record returned.
    func opened() -> any ConnectionRecorder
    /// A connection was refused at once (e.g. `busy`): closed, never opened.
    func refused(code: String)
}

/// One admitted connection's record (`ServerRecorder.opened`).
public protocol ConnectionRecorder: Sendable {
    /// One answer: its steps under `group` if it succeeded, else its error code.
    func record(_ timings: StepTimings, group: String, error: String?)
    /// The connection ended, and why (`peer-closed`, `timedOut`, …).
    func closed(code: String)
    /// What TCP did for one answer under `group`, from its request's arrival to the next
    /// request's (`TransportOptions.readsPackets`), recorded as `step`.
    func packets(_ packets: StepPackets, step: Step, group: String)
}

extension ConnectionRecorder {
    /// Ignores the packets: a recorder that does not keep them.
    public func packets(_ packets: StepPackets, step: Step, group: String) {}
}

/// A served handler, as clients reach it.
public protocol TransportEndpoint: Sendable {
    /// Where clients reach it, e.g. `127.0.0.1:50123`, or nil in process.
    var address: String? { get }
    /// Opens a connection for one simulated client, recording `connect` if it crosses a socket.
    func connect<R: StepRecorder>(recorder: inout R) async throws -> any Connection
    /// Stops serving (if this endpoint serves); open connections end.
    func shutdown() async
}

/// One client's connection: request bodies out, response bodies back, framed on the way.
public protocol Connection: Sendable {
    /// Sends one request body and waits for its response body; the round trip's framed bytes
    /// go to `recorder` as `step`'s (`StepRecorder.transferred`), once the answer is whole.
    ///
    /// When the server runs in this process its steps are recorded into `recorder` too.
    func request<R: StepRecorder>(_ body: [UInt8], step: Step, recorder: inout R) async throws -> [UInt8]
    /// Closes the connection.
    func close() async
}

/// Who sent a request, as the transport that carried it knows: what a server may hold
/// apart when one client must not cost another (the password throttle and the fairness of
/// password checks key on `source`).
public struct FramePeer: Sendable, Hashable, CustomStringConvertible {
    /// Where the request came from: an IPv4 address, an IPv6 address's /64 prefix (one
    /// host's or one site's share of addresses, as RFC 6177 assigns them), or a name for
    /// peers a transport cannot tell apart (`in-process`).
    public var source: String

    /// A peer.
    public init(source: String) {
        self.source = source
    }

    /// The peer of a transport that cannot tell its clients apart.
    public static let inProcess = FramePeer(source: "in-process")

    /// The source of a socket peer's address: IPv4 as is (an IPv4-mapped IPv6 address as
    /// its IPv4), IPv6 cut to its /64.
    public static func source(ipAddress: String) -> String {
        let lowered = ipAddress.lowercased()
        if lowered.hasPrefix("::ffff:"), lowered.contains(".") { return String(lowered.dropFirst(7)) }
        guard lowered.contains(":") else { return lowered }
        // Expand "::" to the missing groups, then keep the first four.
        let halves = lowered.split(separator: "::", maxSplits: 1, omittingEmptySubsequences: false)
        let head = halves[0].split(separator: ":").map(String.init)
        let tail = halves.count > 1 ? halves[1].split(separator: ":").map(String.init) : []
        let groups = head + Array(repeating: "0", count: max(0, 8 - head.count - tail.count)) + tail
        let prefix = groups.prefix(4).map { String(UInt16($0, radix: 16) ?? 0, radix: 16) }
        return prefix.joined(separator: ":") + "::/64"
    }

    /// The networks `source` belongs to, widest first, ending with `source` itself: an IPv4
    /// address's /16 and /24, an IPv6 /64's /32 and /48; any other name alone. What the
    /// fairness of password checks compares, level by level, so that addresses are cheap to
    /// multiply but wide networks are not (docs/messaging.md, "Fairness").
    public static func networks(of source: String) -> [String] {
        if source.hasSuffix("::/64") {
            let groups = source.dropLast(5).split(separator: ":", omittingEmptySubsequences: false)
            guard groups.count == 4 else { return [source] }
            return [groups.prefix(2).joined(separator: ":") + "::/32", groups.prefix(3).joined(separator: ":") + "::/48", source]
        }
        let octets = source.split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4, octets.allSatisfy({ UInt8($0) != nil }) else { return [source] }
        return [octets.prefix(2).joined(separator: ".") + ".0.0/16", octets.prefix(3).joined(separator: ".") + ".0/24", source]
    }

    public var description: String { self.source }
}

/// The server side of a flow: answers one request body.
public protocol FrameHandler: Sendable {
    /// Answers `body`, recording the server's steps; never throws, errors are answers.
    func respond<R: StepRecorder>(to body: [UInt8], recorder: inout R) async -> FrameAnswer
    /// Answers `body` from `peer`. Transports call this one; a handler that does not care
    /// who asks implements only `respond(to:recorder:)`, which this defaults to.
    func respond<R: StepRecorder>(to body: [UInt8], from peer: FramePeer, recorder: inout R) async -> FrameAnswer
    /// The body a transport sends, unasked, to a connection it refuses because it already
    /// serves `connectionLimit` connections, before closing it; nil: close without a word.
    /// The protocol's to say (cx/1 and msg/1 share one `busy` answer), not the transport's.
    func busyAnswer(connectionLimit: Int) -> [UInt8]?
}

extension FrameHandler {
    /// No answer: the connection is closed.
    public func busyAnswer(connectionLimit: Int) -> [UInt8]? { nil }

    /// The answer to anyone: `respond(to:recorder:)`.
    public func respond<R: StepRecorder>(
        to body: [UInt8],
        from peer: FramePeer,
        recorder: inout R
    ) async -> FrameAnswer {
        await self.respond(to: body, recorder: &recorder)
    }
}

/// A handler's answer: the body to send, and whether to close the connection after it.
public struct FrameAnswer: Sendable {
    /// The response frame's body.
    public var body: [UInt8]
    /// Why the server closes the connection after sending, or nil to keep it open.
    public var closeReason: String?
    /// What the server's own report groups this answer's steps under (e.g. the suite).
    public var group: String?
    /// The error code this answer reports with the connection kept open (msg/1's error
    /// answers), for the server's counts of error answers; an answer that closes the
    /// connection is counted by its `closeReason`'s code.
    public var errorCode: String?

    /// An answer.
    public init(body: [UInt8], closeReason: String? = nil, group: String? = nil, errorCode: String? = nil) {
        self.body = body
        self.closeReason = closeReason
        self.group = group
        self.errorCode = errorCode
    }
}

/// The transports a run may use, built once from a type list.
public struct TransportRegistry: Sendable {
    /// The registered transport types, in order.
    public let types: [any Transport.Type]

    /// A registry of the given transports; names must be distinct.
    public init(_ types: [any Transport.Type]) {
        PluginLookup.requireDistinct(types.map { $0.name }, kind: "transport")
        self.types = types
    }

    /// The registered names, in order.
    public var names: [String] { self.types.map { $0.name } }

    /// The transport type called `name`, if one is registered.
    public func type(named name: String) -> (any Transport.Type)? {
        self.types.first { $0.name == name }
    }

    /// Makes the transport called `name`.
    public func make(_ name: String, options: TransportOptions) throws -> any Transport {
        let type = try PluginLookup.find(
            name,
            in: self.types,
            names: self.names,
            kind: "transport",
            plural: "transports"
        )
        return try type.init(options: options)
    }
}
