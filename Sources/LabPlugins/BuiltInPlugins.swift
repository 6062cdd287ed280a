import LabCore
import LabCrypto
import LabDiscovery
import LabMessaging
import LabNIO
import LabOpenSSL
import LabReport
import LabRunner
import LabSwiftCrypto
import LabWire

/// The plugins that ship with the lab, listed once; the CLI and the tests share these lists.
public enum BuiltInPlugins {
    /// `swift-crypto` and `openssl`.
    public static let providers = ProviderRegistry([SwiftCryptoProvider.self, OpenSSLProvider.self])
    /// `classic`, `rsa-modern`, `x25519`, `pq`.
    public static let suites = SuiteRegistry.builtIn
    /// `cx`, then the messaging flows: `login`, `lockout`, `captcha-guess`, `chat`, `rekey`, `password-change`.
    public static let flows = FlowRegistry([CXFlow.self] + MessagingFlows.all)
    /// `in-process`, `tcp`, `tls`.
    public static let transports = TransportRegistry([InProcessTransport.self, TCPTransport.self, TLSTransport.self])
    /// `csv`, `markdown`, `json`.
    public static let reporters = ReporterRegistry.builtIn

    /// Everything, as the runner takes it.
    public static let all = Plugins(
        providers: providers,
        flows: flows,
        transports: transports,
        reporters: reporters.names,
        discovery: DNSSDDiscovery()
    )
}
