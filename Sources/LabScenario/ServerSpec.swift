import Foundation
public import LabCore

/// `"server"`: the one server every client talks to.
public struct ServerSpec: Sendable, Decodable {
    /// The transport plugin: `in-process`, `tcp` or `tls`.
    public var transport: String = "in-process"
    /// The server's crypto provider, and the default for every flow.
    public var provider: String = "swift-crypto"
    /// When the server makes its signing key pair.
    public var keys: KeyLifetime = .perRun
    /// The frame length encoding: `u32be` (default) or `u64le` (the 2009 sample's).
    public var framing: FramingStyle = .u32be
    /// The largest frame body accepted, in bytes.
    public var maxFrameBytes: Int = 5_242_880
    /// Where the server the lab starts listens (network transports); port 0 picks one.
    public var listen: HostPort = HostPort(host: "127.0.0.1", port: 0)
    /// A server already running: the lab starts none and connects here.
    public var address: HostPort?
    /// A DNS-SD service type to browse for (e.g. `_crypttest._tcp`): the lab starts no server.
    public var discover: String?
    /// With `discover`: the instance name to pick (default: the first found).
    public var instance: String?
    /// With `discover`: how long to look before giving up.
    public var discoveryTimeout: TimeSpan = .seconds(5)
    /// How long either side waits for the peer's next bytes.
    public var idleTimeout: TimeSpan = .seconds(30)
    /// The `tls` transport's certificate and pin.
    public var tls: TLSSpec = TLSSpec()
    /// The messaging service's SQLite file (relative to the scenario file); default:
    /// `messaging.sqlite` in the run's report folder.
    public var database: String?
    /// With a server elsewhere: ask it for its own step timings before and after the run (the
    /// lab's `serverStats` request). Off for a server that is not a `lab serve`, which would
    /// answer the unknown request with an error.
    public var serverStats: Bool = true

    static let keys = [
        "transport", "provider", "keys", "framing", "maxFrameBytes", "listen", "address", "discover", "instance",
        "discoveryTimeout", "idleTimeout", "tls", "database", "serverStats",
    ]

    /// The defaults.
    public init() {}

    /// Whether the lab starts the server itself (no `address`, no `discover`).
    public var startsServer: Bool { self.address == nil && self.discover == nil }

    /// Decodes strictly.
    public init(from decoder: any Decoder) throws {
        let object = ScenarioObject(decoder, keys: Self.keys)
        self.transport = object.optional("transport", expected: "a transport name") ?? self.transport
        self.provider = object.optional("provider", expected: "a provider name") ?? self.provider
        self.keys = object.optional("keys", expected: KeyLifetime.expectation) ?? self.keys
        self.framing =
            object.optional("framing", expected: "\"u32be\" or \"u64le\"") ?? self.framing
        self.maxFrameBytes =
            object.optional(
                "maxFrameBytes",
                expected: "an integer from 1 to 2147483647",
                isValid: { $0 >= 1 && $0 <= Int(Int32.max) }
            )
            ?? self.maxFrameBytes
        self.listen = object.optional("listen", expected: HostPort.expectation) ?? self.listen
        self.address = object.optional("address", expected: HostPort.expectation, isValid: { $0.port > 0 })
        self.discover = object.optional(
            "discover",
            expected: "a DNS-SD service type such as \"_crypttest._tcp\"",
            isValid: Self.isServiceType
        )
        self.instance = object.optional("instance", expected: "a DNS-SD instance name", isValid: { !$0.isEmpty })
        self.discoveryTimeout =
            object.optional("discoveryTimeout", expected: TimeSpan.positive, isValid: { $0 > .zero })
            ?? self.discoveryTimeout
        self.idleTimeout =
            object.optional("idleTimeout", expected: TimeSpan.positive, isValid: { $0 > .zero }) ?? self.idleTimeout
        self.tls =
            object.optional("tls", expected: "an object with 'certificate', 'key', 'pin', 'groups' and 'version'")
            ?? self.tls
        self.database = object.optional("database", expected: "a file path", isValid: { !$0.isEmpty })
        self.serverStats = object.optional("serverStats", expected: "true or false") ?? self.serverStats
        if object.contains("serverStats"), self.startsServer {
            object.problem(
                "serverStats",
                "the lab's own server records into the clients' steps; 'serverStats' is for a server elsewhere"
            )
        }
        if object.contains("database"), !self.startsServer {
            object.problem(
                "database",
                "a server elsewhere keeps its own database; 'database' needs the lab to run the server"
            )
        }
        if object.contains("address"), object.contains("discover") {
            object.problem("discover", "give either 'address' or 'discover', not both")
        }
        if object.contains("instance"), !object.contains("discover") {
            object.problem("instance", "'instance' picks among the servers 'discover' finds; add 'discover'")
        }
    }

    /// `_name._tcp` or `_name._udp`, as DNS-SD service types are written.
    static func isServiceType(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 2 && parts[0].hasPrefix("_") && parts[0].count > 1 && ["_tcp", "_udp"].contains(parts[1])
    }
}

/// `"server.tls"`: what the lab's TLS server presents and what its clients trust.
public struct TLSSpec: Sendable, Decodable, Hashable {
    /// The server's certificate (PEM), relative to the scenario file; default: self-signed per run.
    public var certificate: String?
    /// The certificate's private key (PEM).
    public var key: String?
    /// What the clients trust; default: the certificate the lab's server presents.
    public var pin: PinSpec?
    /// The key-exchange groups both sides offer, by name (`TLSGroup`); default: the TLS
    /// library's list.
    public var groups: [TLSGroup]?
    /// The one TLS version both sides speak; default: whichever of 1.2 and 1.3 they agree on.
    public var version: TLSVersionChoice?

    static let keys = ["certificate", "key", "pin", "groups", "version"]

    /// No certificate, no pin: a self-signed certificate, pinned.
    public init() {}

    /// Decodes strictly.
    public init(from decoder: any Decoder) throws {
        let object = ScenarioObject(decoder, keys: Self.keys)
        self.certificate = object.optional(
            "certificate",
            expected: "the path of a PEM certificate",
            isValid: { !$0.isEmpty }
        )
        self.key = object.optional("key", expected: "the path of a PEM private key", isValid: { !$0.isEmpty })
        self.pin = object.optional("pin", expected: "an object with 'certificate' or 'spkiSHA256'")
        let names = TLSGroup.all.map { "\"\($0.name)\"" }.joined(separator: ", ")
        let groups: [String]? = object.optional(
            "groups",
            expected: "a non-empty array of distinct groups from \(names)",
            isValid: { !$0.isEmpty && Set($0).count == $0.count && $0.allSatisfy { TLSGroup.named($0) != nil } }
        )
        self.groups = groups?.compactMap(TLSGroup.named)
        let version: String? = object.optional(
            "version",
            expected: "\"1.2\" or \"1.3\"",
            isValid: { TLSVersionChoice(rawValue: $0) != nil }
        )
        self.version = version.flatMap(TLSVersionChoice.init(rawValue:))
        if self.version == .tls12, let groups = self.groups, groups.allSatisfy(\.isPostQuantum) {
            object.problem(
                "groups",
                "TLS 1.2 has no post-quantum group: add a classical one or drop \"version\": \"1.2\""
            )
        }
        if object.contains("certificate") != object.contains("key") {
            object.problem(
                object.contains("certificate") ? "key" : "certificate",
                "missing; 'certificate' and 'key' go together"
            )
        }
    }
}

/// `"server.tls.pin"`: a bundled certificate, or the SHA-256 of the server's public key.
public struct PinSpec: Sendable, Decodable, Hashable {
    /// A certificate file (PEM or DER) the server must present exactly.
    public var certificate: String?
    /// The SHA-256 of the server's SubjectPublicKeyInfo, base64 (as `sha256/…` pins) or hex.
    public var spkiSHA256: [UInt8]?

    /// Decodes strictly: exactly one of the two.
    public init(from decoder: any Decoder) throws {
        let object = ScenarioObject(decoder, keys: ["certificate", "spkiSHA256"])
        self.certificate = object.optional(
            "certificate",
            expected: "the path of a certificate",
            isValid: { !$0.isEmpty }
        )
        let expectation = "a SHA-256 in base64 (44 characters, as openssl prints it) or hex (64 digits)"
        if let text: String = object.optional("spkiSHA256", expected: expectation) {
            self.spkiSHA256 = Self.digest(text)
            if self.spkiSHA256 == nil { object.problem("spkiSHA256", "expected \(expectation), found \"\(text)\"") }
        }
        if object.contains("certificate") == object.contains("spkiSHA256") {
            object.log.add(object.codingPath, "give exactly one of 'certificate' and 'spkiSHA256'")
        }
    }

    /// A 32-byte digest from base64 (optionally `sha256/`-prefixed) or hex (colons allowed).
    public static func digest(_ text: String) -> [UInt8]? {
        var text = text.trimmingCharacters(in: .whitespaces)
        if text.hasPrefix("sha256/") { text.removeFirst("sha256/".count) }
        let hex = text.replacingOccurrences(of: ":", with: "")
        if hex.count == 64, let bytes = [UInt8](hex: hex) { return bytes }
        if let data = Data(base64Encoded: text), data.count == 32 { return Array(data) }
        return nil
    }
}

/// `"host:port"` (`[v6]:port` for IPv6).
public struct HostPort: ScenarioString, Sendable, Hashable, CustomStringConvertible {
    /// The host name or address.
    public var host: String
    /// The port, 0 to 65535.
    public var port: Int

    /// What a valid value looks like.
    public static let expectation = "\"host:port\", e.g. \"127.0.0.1:7000\""

    /// A host and port.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `host:port` or `[v6]:port`.
    public init?(parsing text: String) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
            (0...65535).contains(port)
        else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, !host.contains(" ") else { return nil }
        self.init(host: host, port: port)
    }

    /// `host:port`.
    public var description: String {
        self.host.contains(":") ? "[\(self.host)]:\(self.port)" : "\(self.host):\(self.port)"
    }
}
