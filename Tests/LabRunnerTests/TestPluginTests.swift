import Foundation
import LabBuiltIns
import LabCore
import LabKit
import LabResults
import LabRunner
import LabTestSupport
import Synchronization
import Testing

/// The test-only plugins, each registered by one line.
enum TestPlugins {
    static let catalog = BuiltInPlugins.catalog
        .adding(reporter: TallyReporter.self)  // Plugins/TallyReporter.swift
        .adding(transport: DirectTransport.self)  // Plugins/DirectTransport.swift
}

/// A new reporter and a new transport are each one file plus one registry line: the
/// test-only `tally` reporter and `direct` transport, registered in `TestPlugins.catalog`,
/// run a scenario end to end through the same validator, runner and report writer as
/// `lab run`; without those lines the scenario is refused.
@Suite(.tier(.unit)) struct TestPluginTests {
    static let iterations = 6
    static let scenario = """
        {
          "name": "test-plugins",
          "server": { "transport": "direct", "provider": "swift-crypto" },
          "clients": { "count": 1 },
          "load": { "model": "closed", "iterations": \(iterations), "warmupIterations": 0, "deadline": "2 min" },
          "flows": [ { "flow": "cx", "suite": "x25519", "provider": "swift-crypto" } ],
          "thresholds": { "errors": "== 0" },
          "report": { "formats": ["tally", "json"], "charts": false }
        }
        """

    func write(_ text: String) throws -> (file: String, folder: URL) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("plugins-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent("scenario.json")
        try text.write(to: file, atomically: true, encoding: .utf8)
        return (file.path, folder)
    }

    @Test("A scenario runs over the test-only transport and is reported by the test-only reporter")
    func registeredPluginsRun() async throws {
        let (file, folder) = try self.write(Self.scenario)
        defer { try? FileManager.default.removeItem(at: folder) }
        let plan = try TestPlugins.catalog.plan(file: file)
        let carriedBefore = DirectTransport.carried.load(ordering: .relaxed)
        let result = try await Runner(plan: plan).run()
        let carried = DirectTransport.carried.load(ordering: .relaxed) - carriedBefore

        #expect(result.passed)
        #expect(result.metadata.transport == "direct, server in this process")
        #expect(result.completedIterations == Self.iterations)
        #expect(carried == Self.iterations, "one request per cx exchange, all over the direct transport")

        let reports = folder.appendingPathComponent("reports")
        let written = try TestPlugins.catalog.writeReports(result, of: plan, to: reports)
        #expect(Set(written.map(\.lastPathComponent)) == ["tally.txt", "results.json"])
        let tally = try String(contentsOf: reports.appendingPathComponent("tally.txt"), encoding: .utf8)
            .split(separator: "\n")
        #expect(tally.first == "iterations \(Self.iterations)")
        let exchanges = tally.filter { $0.hasSuffix(" exchange \(carried)") }
        #expect(exchanges.count == 1, "tally.txt: \(tally)")
    }

    @Test("Without their registry lines, the scenario's transport and reporter are refused at their JSON paths")
    func unregisteredPluginsAreRefused() throws {
        let (file, folder) = try self.write(Self.scenario)
        defer { try? FileManager.default.removeItem(at: folder) }
        let error = try #require(throws: LabError.self) { try BuiltInPlugins.catalog.plan(file: file) }
        #expect(error.message.contains("$.server.transport"), "\(error.message)")
        #expect(error.message.contains("no transport named 'direct'"), "\(error.message)")
        #expect(error.message.contains("$.report.formats[0]"), "\(error.message)")
        #expect(error.message.contains("no reporter named 'tally'"), "\(error.message)")
    }
}

/// A test-only transport that says it runs TLS over the network: what the scenario's `tls`
/// settings need is asked of the transport's type, not of the name `tls`.
struct SecureTestTransport: Transport {
    static let name = "secure-test"
    static let usesNetwork = true
    static let usesTLS = true

    init(options: TransportOptions) throws {}

    func serve(_ handler: any FrameHandler) async throws -> any TransportEndpoint {
        throw LabError(.unsupported, "secure-test serves nothing")
    }
}

@Suite(.tier(.unit)) struct TransportTraitTests {
    static let catalog = BuiltInPlugins.catalog.adding(transport: SecureTestTransport.self)

    func problems(_ server: String) throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("traits-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("scenario.json")
        try """
        { "name": "traits", "server": \(server), "flows": [ { "flow": "cx", "suite": "x25519" } ] }
        """.write(to: file, atomically: true, encoding: .utf8)
        do {
            _ = try Self.catalog.plan(file: file.path)
            return ""
        } catch let error as LabError {
            return error.message
        }
    }

    @Test("a transport's own type says whether it takes TLS settings, whatever its name")
    func tlsSettingsFollowTheType() throws {
        // Reaching a server elsewhere over a TLS transport needs a pin, as with `tls`.
        let unpinned = try self.problems(#"{ "transport": "secure-test", "address": "127.0.0.1:4433" }"#)
        #expect(unpinned.contains("$.server.tls.pin"), "\(unpinned)")
        let pinned = try self.problems(
            #"{ "transport": "secure-test", "address": "127.0.0.1:4433", "tls": { "pin": { "spkiSHA256": "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=" } } }"#
        )
        #expect(!pinned.contains("$.server.tls"), "\(pinned)")
        // A transport without TLS refuses them, naming every transport that has it.
        let plain = try self.problems(
            #"{ "transport": "tcp", "address": "127.0.0.1:4433", "tls": { "pin": { "spkiSHA256": "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=" } } }"#
        )
        #expect(plain.contains("only the tls or secure-test transport uses certificates and pins"), "\(plain)")
    }
}
