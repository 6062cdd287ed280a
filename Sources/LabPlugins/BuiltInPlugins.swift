import LabCore
import LabCrypto
import LabOpenSSL
import LabSwiftCrypto

/// The plugins that ship with the lab, listed once; the CLI and the tests share these lists.
public enum BuiltInPlugins {
    /// `swift-crypto` and `openssl`.
    public static let providers = ProviderRegistry([SwiftCryptoProvider.self, OpenSSLProvider.self])
    /// `classic`, `rsa-modern`, `x25519`, `pq`.
    public static let suites = SuiteRegistry.builtIn
}
