import LabCore
import LabPlugins
import LabTesting
import Testing

/// Every provider against every published vector file for the primitives it offers.
struct WycheproofTests {
    static let cases: [(provider: String, file: String)] = BuiltInPlugins.providers.names.flatMap { provider in
        WycheproofFiles.all.map { (provider, $0.name) }
    }

    @Test("Wycheproof vectors", arguments: cases.map { "\($0.provider) \($0.file)" })
    func vectors(_ label: String) throws {
        let parts = label.split(separator: " ").map(String.init)
        let provider = try BuiltInPlugins.providers.make(parts[0])
        let file = parts[1]
        let primitive = WycheproofFiles.all.first { $0.name == file }!.primitive
        guard provider.capabilities.primitives.contains(primitive) else {
            // The provider does not offer this primitive, so it has no vectors to pass;
            // `capabilities` tests prove it also refuses to run the suites that need it.
            print(
                "\(provider.name) \(file): not offered (\(provider.capabilities.notes[primitive] ?? primitive.rawValue))"
            )
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
}
