import LabCX
public import LabCore
import LabDiscovery
public import LabKit
public import LabMessaging
import LabOpenSSL
public import LabReport
public import LabRunner
import LabSwiftCrypto
import LabTransports
import LabWire

/// The plugins that ship with the lab: the one list of them. `lab` is `LabCLI.main(catalog:
/// BuiltInPlugins.catalog)`; every other list, default and choice of the lab reads the
/// catalog it is handed (docs/architecture.md, "Adding a plugin": a new built-in plugin is
/// its type plus one line here).
public enum BuiltInPlugins {
    /// `swift-crypto` and `openssl`.
    public static let providers = ProviderRegistry([SwiftCryptoProvider.self, OpenSSLProvider.self])
    /// `classic`, `rsa-modern`, `x25519`, `pq`.
    public static let suites = SuiteRegistry([ClassicSuite.self, RSAModernSuite.self, X25519Suite.self, PQSuite.self])
    /// `cx`, then the messaging flows: `login`, `lockout`, `captcha-guess`, `chat`, `rekey`, `password-change`.
    public static let flows = FlowRegistry([
        CXFlow.self, MessagingFlow<LoginScript>.self, MessagingFlow<LockoutScript>.self,
        MessagingFlow<CaptchaGuessScript>.self, MessagingFlow<ChatScript>.self, MessagingFlow<RekeyScript>.self,
        MessagingFlow<PasswordChangeScript>.self,
    ])
    /// `in-process`, `tcp`, `tls`.
    public static let transports = TransportRegistry([InProcessTransport.self, TCPTransport.self, TLSTransport.self])
    /// cx/1 and msg/1: what `lab serve` serves on its one port.
    public static let served: [any ServedProtocol.Type] = [CXProtocol.self, MessagingProtocol.self]
    /// `csv`, `markdown`, `html`, `json`, and for other tools `junit`, `github`, `bmf`
    /// (Bencher) and `hgrm` (HdrHistogram).
    public static let reporters = ReporterRegistry([
        CSVReporter.self, MarkdownReporter.self, HTMLReporter.self, JSONReporter.self, JUnitReporter.self,
        GitHubReporter.self, BMFReporter.self, HgrmReporter.self,
    ])
    /// msg/1's kinds: four KDFs, two lockout policies, two captchas, two clocks.
    public static let messagingKinds = MessagingKinds(
        kdfs: [SHA512SaltedKDF.self, PBKDF2SHA256KDF.self, ScryptKDF.self, Argon2idKDF.self],
        policies: [ThrottlePolicy.self, SeedPolicy.self],
        captchas: [CSPRNGCaptcha.self, MiddleSquareCaptcha.self],
        clocks: [SystemClock.self, VirtualClock.self]
    )

    /// Every registry, as `lab` uses them. The calibration yardstick runs on OpenSSL
    /// where it loads: the system's optimised library, the same in a debug and a release
    /// build of the lab, so calibrated figures compare across builds (docs/performance.md).
    public static let catalog = PluginCatalog(
        plugins: Plugins(
            providers: providers,
            suites: suites,
            flows: flows,
            transports: transports,
            served: served,
            reporters: reporters.names,
            discovery: DNSSDDiscovery(),
            calibrationProviders: [OpenSSLProvider.name]
        ),
        reporters: reporters
    ).with(messagingKinds)

    /// Everything, as the runner takes it.
    public static let all = catalog.plugins
}
