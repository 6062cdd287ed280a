import Foundation
public import LabCore
import Synchronization

/// The flow-specific part of a messaging flow's options.
public protocol MessagingExtras: Sendable {
    /// The keys it reads, besides `ServiceSpec.keys(_:)`.
    static var keys: [String] { get }
    /// Reads them, recording problems.
    init(_ object: ScenarioObject)
}

/// A messaging flow's `"options"`: the service's settings and the flow's own.
public struct MessagingFlowOptions<Extras: MessagingExtras>: Decodable, Sendable {
    /// The service.
    public var service: ServiceSpec
    /// The flow's own.
    public var extras: Extras

    /// Decodes strictly.
    public init(from decoder: any Decoder) throws {
        let extensions = decoder.userInfo[PluginExtensions.userInfoKey] as? PluginExtensions ?? PluginExtensions()
        let object = ScenarioObject(decoder, keys: ServiceSpec.keys(extensions[MessagingKinds.self]) + Extras.keys)
        self.service = ServiceSpec(object)
        self.extras = Extras(object)
    }
}

/// No options of its own.
public struct NoExtras: MessagingExtras {
    public static let keys: [String] = []
    public init(_ object: ScenarioObject) {}
}

/// What one simulated client of a messaging flow does: set-up once, then iterations.
public protocol MessagingScript: Sendable {
    /// The flow's own options.
    associatedtype Extras: MessagingExtras
    /// The flow's name, e.g. `login`.
    static var name: String { get }
    /// For `lab list`.
    static var summary: String { get }
    /// The steps it records (the server's `kdf` included).
    static var steps: [Step] { get }
    /// The outcomes it counts (`StepRecorder.count`).
    static var outcomes: [String] { get }
    /// Problems with the options that decoding cannot see.
    static func check(_ extras: Extras, service: ServiceSpec, setup: FlowSetup) -> [(path: String, message: String)]
    /// One client's script.
    init(extras: Extras, context: ScriptContext)
    /// Once per client, before its first iteration (accounts, chats).
    mutating func prepare<R: StepRecorder>(_ client: MessagingClient, recorder: inout R) async throws
    /// One iteration.
    mutating func iterate<R: StepRecorder>(_ client: MessagingClient, recorder: inout R) async throws
}

extension MessagingScript {
    public static func check(
        _ extras: Extras,
        service: ServiceSpec,
        setup: FlowSetup
    ) -> [(path: String, message: String)] {
        []
    }
}

/// What a script knows about its place in the run.
public struct ScriptContext: Sendable {
    /// A prefix unique to this client in this run, for user names (`login-3f9a2c-c7`).
    public var prefix: String
    /// The clock the service reads (shared when the lab runs the server).
    public var clock: any LabClock
    /// The service's settings (the scripts read the policy to know what to expect).
    public var service: ServiceSpec
    /// The provider the client's chat keys and messages are made on (the entry's
    /// `clientProvider`, else its `provider`, else the server's).
    public var provider: any CryptoProvider

    /// The HPKE suite of the service (the one the flow's `hpke` option names), which the
    /// users' keys are made for.
    public var hpke: MsgHPKE { self.service.options.hpke }

    /// A user name for this client: `prefix-role`.
    public func username(_ role: String) -> String { "\(self.prefix)-\(role)" }

    /// A fresh random password of 16 characters.
    public static func password() -> String { "pw-" + Token.random(bytes: 8) }
}

/// A messaging flow: the msg/1 service as the server side, `Script` as each client.
public struct MessagingFlow<Script: MessagingScript>: Flow {
    public typealias Options = MessagingFlowOptions<Script.Extras>

    public static var name: String { Script.name }
    public static var summary: String { Script.summary }
    public static var steps: [Step] { Script.steps }
    public static var outcomes: [String]? { Script.outcomes }
    /// Messaging flows take no suite; reports show the KDF in the suite column.
    public static var usesSuite: Bool { false }

    /// The KDF's name.
    public let suite: String
    /// Whether the KDF, the policy or the captcha is the reference's insecure one.
    public let isInsecure: Bool
    /// The service (nil when the server runs elsewhere).
    public let handler: (any FrameHandler)?
    /// The service, when the lab runs it.
    public let service: MessagingService?
    private let extras: Script.Extras
    private let spec: ServiceSpec
    private let clock: any LabClock
    private let provider: any CryptoProvider
    private let runTag: String
    private let label: String
    private let clients = ClientCounter()

    /// Checks the provider, the clock and the flow's options.
    public static func check(_ setup: FlowSetup, options: Options) -> [(path: String, message: String)] {
        var problems: [(String, String)] = []
        // The client's messages and chat keys run on the entry's provider; the service's
        // HPKE, scrypt and PBKDF2 on swift-crypto, which no provider's primitives replace.
        if let missing = setup.clientProvider.capabilities.missing([.aesGCM], rsaBits: nil) {
            // Where the scenario named the clients' provider.
            let path =
                setup.entry.clientProvider != nil
                ? "clientProvider" : setup.entry.provider != nil ? "provider" : "$.server.provider"
            problems.append((path, "msg/1's messages are AES-256-GCM, which '\(setup.clientProvider.name)' lacks: \(missing)"))
        }
        if setup.startsServer, setup.serverProvider.name != "swift-crypto" {
            problems.append(
                (
                    setup.entry.provider == nil ? "$.server.provider" : "provider",
                    "the msg/1 service runs HPKE, scrypt and PBKDF2 on swift-crypto, not '\(setup.serverProvider.name)'; the clients' chat keys and messages run on the entry's \"clientProvider\", which may be any provider with AES-GCM"
                )
            )
        }
        if !setup.startsServer, setup.entry.options.objectKeys.contains("clock") {
            problems.append(
                (
                    "options.clock",
                    "a server elsewhere keeps its own time; 'clock' applies only when the lab runs the server"
                )
            )
        }
        return problems + Script.check(options.extras, service: options.service, setup: setup)
    }

    /// Opens the store and starts the service, when the lab runs the server.
    public init<R: StepRecorder>(setup: FlowSetup, options: Options, recorder: inout R) throws {
        self.suite = options.service.options.kdf.name
        self.isInsecure = options.service.isInsecure
        self.extras = options.extras
        self.spec = options.service
        self.label = setup.label
        self.runTag = Token.random(bytes: 3)
        self.provider = setup.clientProvider
        self.clock = setup.startsServer ? options.service.clock.make() : SystemClock()
        guard setup.startsServer else {
            self.service = nil
            self.handler = nil
            return
        }
        let path =
            setup.database
            ?? (setup.dataDirectory ?? NSTemporaryDirectory() + "crypto-lab-" + UUID().uuidString) + "/messaging.sqlite"
        let service = MessagingService(
            store: try StoreCache.store(at: path),
            options: options.service.options,
            kinds: setup.extensions[MessagingKinds.self],
            clock: self.clock
        )
        self.service = service
        self.handler = service
    }

    /// One client with its own user names.
    public func makeClient<R: StepRecorder>(recorder: inout R) throws -> any FlowClient {
        let index = self.clients.value.add(1, ordering: .relaxed).oldValue
        let context = ScriptContext(
            prefix: "\(self.label.prefix(24))-\(self.runTag)-c\(index)",
            clock: self.clock,
            service: self.spec,
            provider: self.provider
        )
        return MessagingFlowClient(script: Script(extras: self.extras, context: context))
    }
}

/// One simulated client of a messaging flow.
struct MessagingFlowClient<Script: MessagingScript>: FlowClient {
    var script: Script

    mutating func prepare<R: StepRecorder>(over connection: any Connection, recorder: inout R) async throws {
        try await self.script.prepare(MessagingClient(connection: connection), recorder: &recorder)
    }

    mutating func iterate<R: StepRecorder>(over connection: any Connection, recorder: inout R) async throws {
        try await self.script.iterate(MessagingClient(connection: connection), recorder: &recorder)
    }
}

extension JSONValue {
    /// The keys, if this is an object.
    var objectKeys: [String] {
        if case .object(let object) = self { return Array(object.keys) }
        return []
    }
}

/// Numbers a flow's clients.
final class ClientCounter: Sendable {
    let value = Atomic<Int>(0)
}
