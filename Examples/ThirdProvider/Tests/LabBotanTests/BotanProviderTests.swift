import LabBotan
import LabBuiltIns
import LabCX
import LabCore
import LabTestKit
import Testing

/// The Botan provider proven the way the lab's own are: every Wycheproof file of a primitive
/// it claims, and the independent Python peer as client and as server for every suite it can do.
@Suite struct BotanProviderTests {
    static let provider: BotanProvider = {
        do { return try BotanProvider() } catch { fatalError("Botan must load: \(error)") }
    }()

    static let offeredFiles = WycheproofFiles.all.map(\.name).filter {
        WycheproofFiles.notOffered($0, by: provider.capabilities) == nil
    }

    @Test("Wycheproof vectors", arguments: offeredFiles)
    func vectors(_ file: String) throws {
        let tally = try WycheproofRunner(provider: Self.provider).run(file)
        print(tally)
        #expect(tally.failures.isEmpty, "\(tally.failures.prefix(10).joined(separator: "\n"))")
        let total = try WycheproofFile(file).testCount
        #expect(tally.ran + tally.skippedCount == total)
        #expect(tally.ran * 4 >= total * 3, "ran \(tally.ran) of \(total)")
    }

    @Test("It claims every primitive but ML-KEM and ML-DSA, and has their files to prove it")
    func claims() {
        #expect(Self.provider.capabilities.primitives == Set(Primitive.allCases).subtracting([.mlkem768, .mldsa65]))
        #expect(Self.offeredFiles.count >= 12, "\(Self.offeredFiles)")
    }

    /// classic from 1024-bit RSA (Botan makes no smaller key), rsa-modern, x25519.
    static let suites: [String] = ["classic@1024", "rsa-modern", "x25519"]

    static func suite(_ text: String) throws -> any Suite {
        let parts = text.split(separator: "@")
        return try BuiltInPlugins.suites.make(String(parts[0]), options: SuiteOptions(rsaBits: parts.count > 1 ? Int(parts[1]) : nil))
    }

    @Test("The Python client opens a Botan server's response", arguments: suites)
    func serves(_ suite: String) async throws {
        try await ProviderInterop.labServesPeer(Self.provider, suite: try Self.suite(suite))
    }

    @Test("A Botan client opens the Python server's response", arguments: suites)
    func asks(_ suite: String) async throws {
        try await ProviderInterop.peerServesLab(Self.provider, suite: try Self.suite(suite))
    }

    @Test("pq is refused with Botan's reason, before anything runs")
    func refusesPQ() throws {
        let reason = try Self.suite("pq").unsupportedReason(on: Self.provider)
        #expect(reason?.hasPrefix("Botan 2 has no ML-") == true, "\(reason ?? "nil")")
    }
}
