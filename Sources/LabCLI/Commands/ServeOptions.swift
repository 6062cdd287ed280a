import ArgumentParser
import Foundation
import LabCore
import LabFraming
import LabKit
import LabMessaging
import LabRunner
import LabTransports
import LabWire

/// `lab serve`'s listener: where it listens, how frames are read, when a connection ends,
/// and TLS. Checked by the parser (`validate()`), before the command runs: a wrong value
/// exits 1 with the option's name.
struct ListenerOptions: ParsableArguments {
    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "The port to listen on; 0 picks a free one.")
    var port = 0

    @Option(help: "The frame length encoding (u64le: the 2009 sample's).")
    var framing = FramingStyle.u32be

    @Option(help: "The largest frame body accepted, in bytes.")
    var maxFrameBytes = Framing.defaultMaxFrameBytes

    @Option(help: "Close a connection that sends nothing for this long, e.g. \"30 s\".")
    var idleTimeout = TimeSpan.seconds(30)

    @Option(help: "Close a connection whose frame is still arriving this long after its first byte (a slow sender).")
    var frameTimeout = TimeSpan.seconds(30)

    @Option(
        help: """
            On SIGINT or SIGTERM, finish the answers in flight for at most this long, e.g. "10 s", \
            then close what is still open; "0 s" closes everything at once.
            """
    )
    var drainTimeout = TimeSpan.seconds(10)

    @Option(help: "Serve at most this many connections at once; one more is answered busy and closed.")
    var maxConnections = TransportOptions.defaultMaxConnections

    @Option(
        help: """
            The bytes frames still arriving may hold across all connections, each counted at the \
            size its header announces; the connection whose frame would pass it is closed.
            """
    )
    var maxBufferedBytes = TransportOptions.defaultMaxBufferedBytes

    @Flag(
        help: """
            Read each connection's TCP counters (TCP_INFO) at every request: the segments and \
            retransmissions of each answer, in the report and in serverStats.
            """
    )
    var packets = false

    @Option(
        name: .customLong("transport"),
        help: ArgumentHelp(
            "The transport, one of the lab's that cross a socket: \(ListenerOptions.networkTransports.joined(separator: ", ")) (default tcp; --tls means tls).",
            valueName: "NAME"
        )
    )
    var transportName: String?

    @Flag(help: "Serve TLS; with no --tls-certificate, on a fresh self-signed certificate.")
    var tls = false

    @Option(help: "The TLS certificate (PEM); implies --tls.")
    var tlsCertificate: String?

    @Option(help: "The TLS certificate's private key (PEM).")
    var tlsKey: String?

    @Option(
        help: ArgumentHelp(
            "The key-exchange groups TLS accepts, comma-separated (default: the library's); the client's order picks among them.",
            valueName: "x25519,secp256r1,secp384r1,x25519-mlkem768"
        )
    )
    var tlsGroups: String?

    @Option(help: "The one TLS version to speak, 1.2 or 1.3 (default: either).")
    var tlsVersion: String?

    func validate() throws {
        guard (0...65535).contains(self.port) else { throw ValidationError("--port must be 0...65535") }
        guard self.maxFrameBytes >= 1 else { throw ValidationError("--max-frame-bytes must be at least 1") }
        guard self.idleTimeout > .zero else { throw ValidationError("--idle-timeout must be longer than 0 s") }
        guard self.frameTimeout > .zero else { throw ValidationError("--frame-timeout must be longer than 0 s") }
        guard self.maxConnections >= 1 else { throw ValidationError("--max-connections must be at least 1") }
        guard self.maxBufferedBytes >= self.maxFrameBytes else {
            throw ValidationError("--max-buffered-bytes must be at least --max-frame-bytes (\(self.maxFrameBytes))")
        }
        if (self.tlsCertificate == nil) != (self.tlsKey == nil) {
            throw ValidationError("--tls-certificate and --tls-key go together")
        }
        if let groups = self.tlsGroups {
            let names = groups.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            guard !names.isEmpty, names.allSatisfy({ TLSGroup.named($0) != nil }), Set(names).count == names.count
            else {
                throw ValidationError(
                    "--tls-groups takes distinct groups from \(TLSGroup.all.map(\.name).joined(separator: ", ")), comma-separated; not '\(groups)'"
                )
            }
        }
        if let version = self.tlsVersion, TLSVersionChoice(rawValue: version) == nil {
            throw ValidationError("--tls-version must be 1.2 or 1.3, not '\(version)'")
        }
        if self.tlsVersion == TLSVersionChoice.tls12.rawValue,
            let groups = self.tlsGroups?.split(separator: ",").compactMap({ TLSGroup.named(String($0)) }),
            groups.allSatisfy(\.isPostQuantum)
        {
            throw ValidationError("--tls-version 1.2 has no post-quantum group: add a classical one to --tls-groups")
        }
        if !self.useTLS, self.tlsGroups != nil || self.tlsVersion != nil {
            throw ValidationError("--tls-groups and --tls-version go with --tls")
        }
        if let name = self.transportName {
            guard Self.networkTransports.contains(name) else {
                throw ValidationError(
                    "--transport must be one of \(Self.networkTransports.joined(separator: ", ")), not '\(name)'"
                )
            }
            if self.tls || self.tlsCertificate != nil, !(Self.transportType(name)?.usesTLS ?? false) {
                throw ValidationError("--tls and --tls-certificate go with a TLS transport, not '\(name)'")
            }
        }
    }

    /// The catalog's transports that cross a socket: those that can serve others.
    static var networkTransports: [String] {
        LabCLI.catalog.plugins.transports.types.filter { $0.usesNetwork }.map { $0.name }
    }

    static func transportType(_ name: String) -> (any Transport.Type)? {
        LabCLI.catalog.plugins.transports.type(named: name)
    }

    /// TLS was asked for, implied by a certificate, or what the chosen transport runs.
    var useTLS: Bool {
        self.tls || self.tlsCertificate != nil || (self.transportName.flatMap(Self.transportType)?.usesTLS ?? false)
    }

    /// The transport plugin's name: `--transport`'s, else `tls` or `tcp`.
    var transport: String { self.transportName ?? (self.useTLS ? TLSTransport.name : TCPTransport.name) }

    /// What the transport is made with.
    var transportOptions: TransportOptions {
        var tls = TLSSettings()
        tls.certificateFile = self.tlsCertificate
        tls.privateKeyFile = self.tlsKey
        tls.groups = self.tlsGroups.map { $0.split(separator: ",").compactMap { TLSGroup.named(String($0)) } }
        tls.version = self.tlsVersion.flatMap(TLSVersionChoice.init(rawValue:))
        var options = TransportOptions(
            framing: self.framing,
            maxFrameBytes: self.maxFrameBytes,
            host: self.host,
            port: self.port,
            idleTimeout: self.idleTimeout,
            frameTimeout: self.frameTimeout,
            maxConnections: self.maxConnections,
            tls: tls,
            maxBufferedBytes: self.maxBufferedBytes
        )
        options.readsPackets = self.packets
        return options
    }

    /// How long shutdown lets the answers in flight finish.
    var drain: Duration { .nanoseconds(Int64(clamping: self.drainTimeout.nanoseconds)) }
}

/// msg/1's service as `lab serve` runs it: its KDF, lockout policy, captchas, clock and
/// password-check pool. Checked by the parser, like the listener.
struct MessagingServeOptions: ParsableArguments {
    @Flag(help: "Serve cx/1 only, without the messaging service.")
    var noMessaging = false

    @Option(
        help: ArgumentHelp(
            "msg/1's SQLite file; default: messaging.sqlite under --report, else under Reports/serve/<UTC time>-<pid>/.",
            valueName: "path"
        )
    )
    var db: String?

    @Option(help: "msg/1's password KDF.")
    var kdf = ChoiceName<KDFChoices>.catalogDefault

    @Option(help: "PBKDF2 iterations, with --kdf pbkdf2-sha256.")
    var pbkdf2Iterations = PasswordKDF.defaultPBKDF2Iterations

    @Option(help: "log2 of scrypt's N, with --kdf scrypt.")
    var scryptLogN = 17

    @Option(
        name: .customLong("argon2-memory-kib"),
        help: "Argon2id's memory in KiB (t = 2, p = 1), with --kdf argon2id."
    )
    var argon2MemoryKiB = 19_456

    @Option(help: "msg/1's lockout policy, with its default thresholds.")
    var policy = ChoiceName<PolicyChoices>.catalogDefault

    @Option(help: "With --policy seed: how long the 3rd failure postpones the account, e.g. \"1 s\" (default 30 min).")
    var postponeFor: TimeSpan?

    @Option(help: "msg/1's captcha generator.")
    var captcha = ChoiceName<CaptchaChoices>.catalogDefault

    @Option(
        name: .customLong("msg-option"),
        help: ArgumentHelp(
            """
            One more key of msg/1's service as a messaging flow's "options" take it (docs/scenarios.md), \
            e.g. lockAfter=8 or a plugin's own key; the value is JSON where it parses, else a string. Repeatable.
            """,
            valueName: "key=value"
        )
    )
    var msgOptions: [MsgOption] = []

    @Option(
        help: """
            msg/1's HPKE suite for passwords and chat keys (xwing: X-Wing, ML-KEM-768 with X25519); \
            users' keys are of its kind.
            """
    )
    var hpke = MsgHPKE.x25519

    @Option(help: "msg/1's clock.")
    var clock = ChoiceName<ClockChoices>(SystemClock.choice.name)

    @Option(help: "msg/1's password checks at once, each on a thread of its own, off the event loops.")
    var kdfWorkers = MessagingOptions.defaultKDFWorkers

    @Option(help: "msg/1's password checks that may wait for a worker; one more is answered busy.")
    var kdfQueue = 64

    @Option(
        help:
            "msg/1's password checks of one account that may wait for the one before them (holding no worker); one more is answered busy."
    )
    var kdfAccountQueue = 256

    func validate() throws {
        guard self.pbkdf2Iterations >= 1 else { throw ValidationError("--pbkdf2-iterations must be at least 1") }
        guard (1...20).contains(self.scryptLogN) else { throw ValidationError("--scrypt-log-n must be 1...20") }
        guard PasswordKDF.argon2MemoryRange.contains(self.argon2MemoryKiB) else {
            throw ValidationError("--argon2-memory-kib must be 64...4194304")
        }
        if let span = self.postponeFor {
            guard self.policy.name == "seed" else { throw ValidationError("--postpone-for goes with --policy seed") }
            guard span > .zero else { throw ValidationError("--postpone-for must be longer than 0 s") }
        }
        guard self.kdfWorkers >= 1 else { throw ValidationError("--kdf-workers must be at least 1") }
        guard self.kdfQueue >= 0 else { throw ValidationError("--kdf-queue must be 0 or more") }
        guard self.kdfAccountQueue >= 0 else { throw ValidationError("--kdf-account-queue must be 0 or more") }
        _ = try self.spec(kinds: LabCLI.messagingKinds)
    }

    /// The service's settings, read as a messaging flow's options are, with the kinds of
    /// `kinds`: the choices and their flags, then each `--msg-option`. A problem names the
    /// key (`--msg-option lockAfter: …`).
    func spec(kinds: MessagingKinds) throws -> ServiceSpec {
        var object: [String: JSONValue] = [
            "kdf": .string(self.kdf.name), "policy": .string(self.policy.name), "captcha": .string(self.captcha.name),
            "hpke": .string(self.hpke.rawValue), "clock": .string(self.clock.name),
        ]
        switch self.kdf.name {
        case PBKDF2SHA256KDF.choice.name: object["pbkdf2Iterations"] = .number(Double(self.pbkdf2Iterations))
        case ScryptKDF.choice.name: object["scryptLogN"] = .number(Double(self.scryptLogN))
        case Argon2idKDF.choice.name: object["argon2MemoryKiB"] = .number(Double(self.argon2MemoryKiB))
        default: break
        }
        if let span = self.postponeFor { object["postponeFor"] = .string("\(span.seconds) s") }
        for option in self.msgOptions { object[option.key] = option.value }
        let decoded = ServiceSpec.decode(object, kinds: kinds)
        if let problem = decoded.problems.first {
            throw ValidationError("--msg-option \(problem.path.dropFirst(2)): \(problem.message)")
        }
        guard let spec = decoded.spec else { throw ValidationError("msg/1's options do not decode") }
        var options = spec.options
        options.kdfWorkers = self.kdfWorkers
        options.kdfQueueLimit = self.kdfQueue
        options.accountWaitLimit = self.kdfAccountQueue
        return ServiceSpec(options: options, clock: spec.clock)
    }
}

/// `--msg-option key=value`: the value as JSON where it parses (`8`, `true`), else a string
/// (`30 min`).
struct MsgOption: ExpressibleByArgument {
    let key: String
    let value: JSONValue

    init?(argument: String) {
        let parts = argument.split(separator: "=", maxSplits: 1).map(String.init)
        guard parts.count == 2, !parts[0].isEmpty else { return nil }
        self.key = parts[0]
        self.value =
            (try? JSONDecoder().decode(JSONValue.self, from: Data(parts[1].utf8))) ?? .string(parts[1])
    }
}

/// One of msg/1's lists of choices (`MessagingKinds`, the catalog's), for the parser:
/// `--help` lists its names, and a name not on it is refused with the list.
protocol ChoiceList {
    static var names: [String] { get }
    /// The catalog's default, or nil for a list without one (clocks).
    static var defaultName: String? { get }
}

extension ChoiceList {
    static var defaultName: String? { nil }
}

/// The catalog's KDFs.
enum KDFChoices: ChoiceList {
    static var names: [String] { LabCLI.messagingKinds.kdfs.map { $0.choice.name } }
    static var defaultName: String? { LabCLI.messagingKinds.kdfs.first { $0.choice.isDefault }?.choice.name }
}

/// The catalog's lockout policies.
enum PolicyChoices: ChoiceList {
    static var names: [String] { LabCLI.messagingKinds.policies.map { $0.choice.name } }
    static var defaultName: String? { LabCLI.messagingKinds.policies.first { $0.choice.isDefault }?.choice.name }
}

/// The catalog's captcha generators.
enum CaptchaChoices: ChoiceList {
    static var names: [String] { LabCLI.messagingKinds.captchas.map { $0.choice.name } }
    static var defaultName: String? { LabCLI.messagingKinds.captchas.first { $0.choice.isDefault }?.choice.name }
}

/// The catalog's clocks.
enum ClockChoices: ChoiceList {
    static var names: [String] { LabCLI.messagingKinds.clocks.map { $0.choice.name } }
}

/// A name from the choice list `List`.
struct ChoiceName<List: ChoiceList>: ExpressibleByArgument {
    let name: String

    init(_ name: String) { self.name = name }

    /// The catalog's default choice (empty for a catalog without msg/1's kinds).
    static var catalogDefault: ChoiceName { ChoiceName(List.defaultName ?? "") }

    init?(argument: String) {
        guard List.names.contains(argument) else { return nil }
        self.name = argument
    }

    static var allValueStrings: [String] { List.names }
    var defaultValueDescription: String { self.name }
}
