import Foundation

/// A scenario file: the experiment `lab run` carries out. Every field but `name` and `flows`
/// has a default; docs/scenarios.md lists them all.
public struct Scenario: Sendable, Decodable {
    /// Names the run and its report folder (`Reports/<name>/…`).
    public var name: String
    /// Free text shown at the top of the report.
    public var description: String
    /// Seeds each client's choice of flow, so runs pick the same sequence.
    public var seed: UInt64
    /// The one server.
    public var server: ServerSpec
    /// The simulated clients.
    public var clients: ClientsSpec
    /// How load is applied.
    public var load: LoadSpec
    /// What each client does, chosen per iteration by weight.
    public var flows: [FlowEntry]
    /// Pass/fail conditions, metric → condition, e.g. `"cx.exchange.p99": "< 50 ms"`.
    public var thresholds: [String: String]
    /// Which reports to write.
    public var report: ReportSpec

    static let keys = ["name", "description", "seed", "server", "clients", "load", "flows", "thresholds", "report"]

    /// Decodes strictly, recording problems in the decoder's `ProblemLog`.
    public init(from decoder: any Decoder) throws {
        let object = ScenarioObject(decoder, keys: Self.keys)
        self.name =
            object.required(
                "name",
                as: String.self,
                expected: "a name of 1 to 64 letters, digits, '.', '_' or '-'",
                isValid: Self.isValidName
            ) ?? "unnamed"
        self.description = object.optional("description", expected: "a string") ?? ""
        self.seed = object.optional("seed", expected: "a non-negative integer") ?? 1
        self.server = object.optional("server", expected: "an object") ?? ServerSpec()
        self.clients = object.optional("clients", expected: "an object") ?? ClientsSpec()
        self.load = object.optional("load", expected: "an object") ?? LoadSpec()
        // The first client connects at the start of the ramp-up and then waits for the last,
        // so a server that closes silent connections must wait longer than both together.
        let hold = self.clients.rampUp.nanoseconds &+ self.load.duration.nanoseconds
        if self.load.model == .idle, self.load.duration > .zero, hold >= self.server.idleTimeout.nanoseconds {
            object.log.add(
                object.codingPath + [AnyCodingKey("load"), AnyCodingKey("duration")],
                "expected the clients' ramp-up (\(self.clients.rampUp)) plus the idle duration (\(self.load.duration)) to be shorter than server.idleTimeout (\(self.server.idleTimeout)), or the server closes the first clients' connections during the hold; shorten them or raise server.idleTimeout (and `lab serve --idle-timeout`)"
            )
        }
        self.flows =
            object.required(
                "flows",
                as: [FlowEntry].self,
                expected: "a non-empty array of flows",
                isValid: { !$0.isEmpty }
            ) ?? []
        var thresholds: [String: String] = [:]
        let rawThresholds: [String: JSONValue]? = object.optional(
            "thresholds",
            expected: "an object of metric → condition strings"
        )
        for (metric, value) in rawThresholds ?? [:] {
            guard case .string(let condition) = value else {
                object.log.add(
                    object.codingPath + [AnyCodingKey("thresholds"), AnyCodingKey(metric)],
                    "expected a condition string such as \"< 50 ms\", found \(value)"
                )
                continue
            }
            thresholds[metric] = condition
        }
        self.thresholds = thresholds
        self.report = object.optional("report", expected: "an object") ?? ReportSpec()
    }

    /// A scenario built in code.
    public init(
        name: String,
        description: String = "",
        seed: UInt64 = 1,
        server: ServerSpec = ServerSpec(),
        clients: ClientsSpec = ClientsSpec(),
        load: LoadSpec = LoadSpec(),
        flows: [FlowEntry],
        thresholds: [String: String] = [:],
        report: ReportSpec = ReportSpec()
    ) {
        self.name = name
        self.description = description
        self.seed = seed
        self.server = server
        self.clients = clients
        self.load = load
        self.flows = flows
        self.thresholds = thresholds
        self.report = report
    }

    static func isValidName(_ name: String) -> Bool {
        (1...64).contains(name.count)
            && name.allSatisfy { ($0.isASCII && ($0.isLetter || $0.isNumber)) || $0 == "." || $0 == "_" || $0 == "-" }
            && name.first != "."
    }

    /// Decodes `data`: the scenario, and every problem of shape found on the way.
    ///
    /// A file that is not JSON at all yields one problem at `$` and no scenario.
    public static func decode(_ data: Data) -> (scenario: Scenario?, problems: [ScenarioProblem]) {
        let log = ProblemLog()
        let decoder = JSONDecoder()
        decoder.userInfo[ProblemLog.userInfoKey] = log
        do {
            let scenario = try decoder.decode(Scenario.self, from: data)
            return (scenario, log.problems)
        } catch {
            return (
                nil,
                [ScenarioProblem(path: "$", message: "not valid JSON: \(Self.syntaxError(in: data) ?? "\(error)")")]
            )
        }
    }

    /// Where the JSON syntax breaks, as `line L, column C: …`, from `JSONSerialization`'s offset.
    static func syntaxError(in data: Data) -> String? {
        do {
            _ = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
            return nil
        } catch {
            let text = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "\(error)"
            guard let range = text.range(of: "character "),
                let offset = Int(text[range.upperBound...].prefix { $0.isNumber })
            else { return text }
            let before = data.prefix(offset)
            let line = before.filter { $0 == UInt8(ascii: "\n") }.count + 1
            let column = offset - (before.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0) + 1
            return "line \(line), column \(column): \(text)"
        }
    }
}

/// `"server"`: the one server every client talks to.
public struct ServerSpec: Sendable, Decodable {
    /// The transport plugin: `in-process`, `tcp` or `tls`.
    public var transport: String = "in-process"
    /// The server's crypto provider, and the default for every flow.
    public var provider: String = "swift-crypto"
    /// When the server makes its signing key pair.
    public var keys: KeyLifetime = .perRun
    /// The frame length encoding: `u32be` (default) or `u64le` (the 2009 sample's).
    public var framing: String = "u32be"
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
            object.optional(
                "framing",
                expected: "\"u32be\" or \"u64le\"",
                isValid: { ["u32be", "u64le"].contains($0) }
            )
            ?? self.framing
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
        self.tls = object.optional("tls", expected: "an object with 'certificate', 'key' and 'pin'") ?? self.tls
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

    static let keys = ["certificate", "key", "pin"]

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

/// `"clients"`: how many simulated clients, and how fast they start.
public struct ClientsSpec: Sendable, Decodable {
    /// The number of simulated clients (one task each).
    public var count: Int = 1
    /// Clients start evenly spread over this span.
    public var rampUp: TimeSpan = .zero

    static let keys = ["count", "rampUp"]
    /// The most clients a scenario may ask for.
    public static let maximumCount = 100_000

    /// The defaults.
    public init(count: Int = 1, rampUp: TimeSpan = .zero) {
        self.count = count
        self.rampUp = rampUp
    }

    /// Decodes strictly.
    public init(from decoder: any Decoder) throws {
        let object = ScenarioObject(decoder, keys: Self.keys)
        self.count =
            object.optional(
                "count",
                expected: "an integer from 1 to \(Self.maximumCount)",
                isValid: { (1...Self.maximumCount).contains($0) }
            ) ?? self.count
        self.rampUp = object.optional("rampUp", expected: TimeSpan.expectation) ?? self.rampUp
    }
}

/// The load models.
public enum LoadModel: String, Sendable, Codable, CaseIterable {
    /// Each client runs its iterations back to back.
    case closed
    /// New exchanges start at a target rate, whatever the server's pace.
    case open
    /// Each client connects and sets itself up (`prepare`), then holds its connections idle
    /// for `duration` once every client is connected: the per-client memory footprint.
    case idle
}

/// `"load"`: the load model and its parameters.
public struct LoadSpec: Sendable, Decodable {
    /// `closed` (default) or `open`.
    public var model: LoadModel = .closed
    /// Closed: measured iterations per client.
    public var iterations: Int = 100
    /// Closed: iterations per client run first and left out of the results.
    public var warmupIterations: Int = 0
    /// Closed: the measured iterations fall into this many rounds. Every client finishes a
    /// round before any starts the next, and the lab times its calibration operations in
    /// between, so each round is one repeated sample of every step (what `lab check`
    /// tests over). 1 (the default) is one uninterrupted run.
    public var rounds: Int = 1
    /// Open: new exchanges per second, over all clients.
    public var rate: Double = 0
    /// Open: how long exchanges keep starting. Idle: how long every client holds its
    /// connections once all are connected.
    public var duration: TimeSpan = .zero
    /// Open: the first part of `duration`, left out of the results.
    public var warmup: TimeSpan = .zero
    /// Both: the run stops cleanly, keeping what it measured, once this much time has passed.
    public var deadline: TimeSpan = .seconds(600)

    static let keys = ["model", "iterations", "warmupIterations", "rounds", "rate", "duration", "warmup", "deadline"]
    static let closedOnly = ["iterations", "warmupIterations", "rounds"]
    static let openOnly = ["rate", "duration", "warmup"]

    /// The parameters that `model` does not take.
    static func foreign(to model: LoadModel) -> [String] {
        switch model {
        case .closed: Self.openOnly
        case .open: Self.closedOnly
        case .idle: Self.closedOnly + ["rate", "warmup"]
        }
    }

    /// The models that take the parameter `key`, in words: `the open and idle models`.
    static func models(taking key: String) -> String {
        let models = LoadModel.allCases.filter { !Self.foreign(to: $0).contains(key) }.map(\.rawValue)
        let listed = models.count > 1 ? models.dropLast().joined(separator: ", ") + " and " + models.last! : models[0]
        return "the \(listed) model\(models.count > 1 ? "s" : "")"
    }

    /// A closed model.
    public static func closed(iterations: Int, warmupIterations: Int = 0) -> LoadSpec {
        var spec = LoadSpec()
        spec.iterations = iterations
        spec.warmupIterations = warmupIterations
        return spec
    }

    /// An idle model: connect, then hold the connections for `duration`.
    public static func idle(duration: TimeSpan) -> LoadSpec {
        var spec = LoadSpec()
        spec.model = .idle
        spec.duration = duration
        return spec
    }

    /// An open model.
    public static func open(rate: Double, duration: TimeSpan, warmup: TimeSpan = .zero) -> LoadSpec {
        var spec = LoadSpec()
        spec.model = .open
        spec.rate = rate
        spec.duration = duration
        spec.warmup = warmup
        return spec
    }

    /// The defaults: closed, 100 iterations per client.
    public init() {}

    /// Decodes strictly; parameters of the other model are problems.
    public init(from decoder: any Decoder) throws {
        let object = ScenarioObject(decoder, keys: Self.keys)
        let model: LoadModel? = object.optional("model", expected: "\"closed\", \"open\" or \"idle\"")
        self.model = model ?? self.model
        // With a model that did not decode, which parameters are foreign is unknown.
        for key in Self.foreign(to: self.model)
        where object.contains(key) && (model != nil || !object.contains("model")) {
            object.problem(key, "only for \(Self.models(taking: key)); this load is \(self.model.rawValue)")
        }
        self.iterations =
            object.optional(
                "iterations",
                expected: "an integer from 1 to 100000000",
                isValid: { (1...100_000_000).contains($0) }
            )
            ?? self.iterations
        self.warmupIterations =
            object.optional(
                "warmupIterations",
                expected: "an integer from 0 to 1000000",
                isValid: { (0...1_000_000).contains($0) }
            )
            ?? self.warmupIterations
        self.rounds =
            object.optional(
                "rounds",
                expected: "an integer from 1 to 1000, at most the iterations",
                isValid: { (1...1000).contains($0) }
            )
            ?? self.rounds
        if self.rounds > self.iterations {
            object.problem(
                "rounds",
                "expected at most as many rounds as iterations (\(self.iterations)), found \(self.rounds)"
            )
        }
        if self.model == .open {
            self.rate =
                object.required(
                    "rate",
                    expected: "a rate above 0 and at most 1000000 per second",
                    isValid: { $0 > 0 && $0 <= 1_000_000 }
                )
                ?? 1
            self.duration =
                object.required("duration", expected: "a duration above zero, such as \"10s\"", isValid: { $0 > .zero })
                ?? .seconds(1)
        }
        if self.model == .idle {
            self.duration =
                object.required(
                    "duration",
                    expected: "how long the connected clients stay idle, a duration above zero such as \"5s\"",
                    isValid: { $0 > .zero }
                ) ?? .seconds(1)
        }
        self.warmup = object.optional("warmup", expected: TimeSpan.expectation) ?? self.warmup
        if self.model == .open, self.warmup >= self.duration, self.duration > .zero {
            object.problem(
                "warmup",
                "expected a warm-up shorter than the duration (\(self.duration)), found \"\(self.warmup)\""
            )
        }
        self.deadline =
            object.optional("deadline", expected: "a duration above zero", isValid: { $0 > .zero }) ?? self.deadline
        if self.model == .idle, object.contains("duration"), self.duration > .zero, self.duration >= self.deadline {
            object.problem(
                "deadline",
                "expected a deadline after the idle model's duration (\(self.duration)), found \"\(self.deadline)\""
            )
        }
        if self.model == .open, object.contains("rate"), object.contains("duration") {
            let measured = self.rate * (self.duration.seconds - self.warmup.seconds)
            if measured < 1 {
                object.problem(
                    "rate",
                    "expected rate × (duration − warmup) of at least one measured exchange, found \(TimeSpan.trimmed(self.rate))/s for \(self.duration) (warm-up \(self.warmup))"
                )
            }
            if self.duration >= self.deadline {
                object.problem(
                    "deadline",
                    "expected a deadline after the open model's duration (\(self.duration)), found \"\(self.deadline)\""
                )
            }
        }
    }
}

/// One entry of `"flows"`: a flow plugin, its weight and options.
public struct FlowEntry: Sendable, Decodable {
    /// The flow plugin, e.g. `cx`.
    public var flow: String
    /// The label reports and thresholds use; defaults to the flow's name, then `name-2`, … when repeated.
    public var name: String?
    /// The relative chance that a client's iteration runs this flow.
    public var weight: Int
    /// The suite, for flows that use one (`cx`); defaults to the flow's choice.
    public var suite: String?
    /// The provider on both sides; defaults to the server's.
    public var provider: String?
    /// The simulated clients' provider, when it differs from `provider` (a cross-provider run).
    public var clientProvider: String?
    /// Flow-specific options, decoded by the flow itself.
    public var options: JSONValue

    static let keys = ["flow", "name", "weight", "suite", "provider", "clientProvider", "options"]

    /// An entry built in code.
    public init(
        flow: String,
        name: String? = nil,
        weight: Int = 1,
        suite: String? = nil,
        provider: String? = nil,
        clientProvider: String? = nil,
        options: JSONValue = .object([:])
    ) {
        self.flow = flow
        self.name = name
        self.weight = weight
        self.suite = suite
        self.provider = provider
        self.clientProvider = clientProvider
        self.options = options
    }

    /// Decodes strictly.
    public init(from decoder: any Decoder) throws {
        let object = ScenarioObject(decoder, keys: Self.keys)
        self.flow = object.required("flow", expected: "a flow name", isValid: { !$0.isEmpty }) ?? ""
        self.name = object.optional(
            "name",
            expected: "a label of letters, digits, '_' or '-'",
            isValid: Self.isValidLabel
        )
        self.weight =
            object.optional(
                "weight",
                expected: "an integer from 1 to 1000000",
                isValid: { (1...1_000_000).contains($0) }
            ) ?? 1
        self.suite = object.optional("suite", expected: "a suite name")
        self.provider = object.optional("provider", expected: "a provider name")
        self.clientProvider = object.optional("clientProvider", expected: "a provider name")
        let options = object.raw("options") ?? .object([:])
        if case .object = options {
            self.options = options
        } else {
            object.problem("options", "expected an object, found \(options)")
            self.options = .object([:])
        }
    }

    static func isValidLabel(_ label: String) -> Bool {
        (1...64).contains(label.count)
            && label.allSatisfy { ($0.isASCII && ($0.isLetter || $0.isNumber)) || $0 == "_" || $0 == "-" }
    }
}

/// `"report"`: which reports to write.
public struct ReportSpec: Sendable, Decodable {
    /// Reporter names: `csv`, `markdown`, `json` (all three by default).
    public var formats: [String] = ["csv", "markdown", "json"]
    /// Draw SVG charts beside the markdown report.
    public var charts: Bool = true

    static let keys = ["formats", "charts"]

    /// The defaults.
    public init() {}

    /// Decodes strictly.
    public init(from decoder: any Decoder) throws {
        let object = ScenarioObject(decoder, keys: Self.keys)
        if let formats: [JSONValue] = object.optional("formats", expected: "an array of reporter names") {
            self.formats = formats.enumerated().compactMap { index, value in
                guard case .string(let name) = value else {
                    object.log.add(
                        object.codingPath + [AnyCodingKey("formats"), AnyCodingKey(intValue: index)],
                        "expected a reporter name, found \(value)"
                    )
                    return nil
                }
                return name
            }
        }
        self.charts = object.optional("charts", expected: "true or false") ?? self.charts
    }
}
