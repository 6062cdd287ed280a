import LabBuiltIns
import LabCore
import LabTestSupport
import Testing

/// Every provider against every published vector file for the primitives it offers.
@Suite(.tier(.unit)) struct WycheproofTests {
    static let cases: [(provider: String, file: String)] = BuiltInPlugins.providers.names.flatMap { provider in
        WycheproofFiles.all.map { (provider, $0.name) }
    }

    @Test("Wycheproof vectors", arguments: cases.map { "\($0.provider) \($0.file)" })
    func vectors(_ label: String) throws {
        let parts = label.split(separator: " ").map(String.init)
        let provider = try BuiltInPlugins.providers.make(parts[0])
        let file = parts[1]
        if let reason = WycheproofFiles.notOffered(file, by: provider.capabilities) {
            // The provider does not offer this primitive or key size, so it has no vectors
            // to pass; `capabilities` tests prove it also refuses to run the suites that need it.
            print("\(provider.name) \(file): not offered (\(reason))")
            return
        }
        let tally = try Self.run(file, on: provider)
        print(tally)
        #expect(tally.failures.isEmpty, "\(tally.failures.prefix(10).joined(separator: "\n"))")
        let total = try WycheproofFile(file).testCount
        #expect(tally.ran + tally.skippedCount == total, "every test is either run or skipped with a reason")
        // Skips are for parameters cx/1 never uses; they must stay a small minority.
        #expect(tally.ran * 4 >= total * 3, "ran \(tally.ran) of \(total)")
    }

    static func run<P: CryptoProvider>(_ file: String, on provider: P) throws -> VectorTally {
        try WycheproofRunner(provider: provider).run(file)
    }

    @Test("Every vector file is run: each listed file by some provider, each file in the folder listed")
    func everyFileIsRun() throws {
        let providers = try BuiltInPlugins.providers.names.map { try BuiltInPlugins.providers.make($0) }
        for entry in WycheproofFiles.all {
            #expect(
                providers.contains { WycheproofFiles.notOffered(entry.name, by: $0.capabilities) == nil },
                "no provider runs \(entry.name)"
            )
        }
        let inFolder = RepositoryPaths.files(in: "Tests/Vectors/wycheproof", withExtension: "json")
        // Run by LabMessagingTests: ChaCha20-Poly1305 is msg/1's HPKE AEAD (ChaChaPolyVectorTests),
        // PBKDF2-HMAC-SHA256 one of its password KDFs (KDFTests).
        let listed = Set(
            WycheproofFiles.all.map(\.name) + ["chacha20_poly1305_test.json", "pbkdf2_hmacsha256_test.json"]
        )
        #expect(Set(inFolder) == listed, "files in the folder and not run: \(Set(inFolder).subtracting(listed))")
    }
}
