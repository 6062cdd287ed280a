public import LabCore

extension SuiteRegistry {
    /// The built-in suites: `classic`, `rsa-modern`, `x25519`, `pq`.
    public static let builtIn = SuiteRegistry([ClassicSuite.self, RSAModernSuite.self, X25519Suite.self, PQSuite.self])
}
