public import LabCore
import LabOpenSSL
import LabSwiftCrypto

/// The crypto providers that ship with the lab, listed once: the CLI's catalog
/// (`BuiltInPlugins`), the benchmarks and the fuzz targets all take them from here.
public enum BuiltInProviders {
    /// `swift-crypto` and `openssl`.
    public static let registry = ProviderRegistry([SwiftCryptoProvider.self, OpenSSLProvider.self])
}
