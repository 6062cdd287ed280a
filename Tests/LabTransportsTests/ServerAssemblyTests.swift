import Foundation
import LabBuiltIns
import LabCore
import LabMessaging
import LabResults
import LabServer
import LabTestSupport
import LabTransports
import Testing

/// `lab serve`'s suite list, parsed into `SuiteChoice`s before the command runs.
@Suite(.tier(.unit)) struct SuiteChoiceTests {
    @Test("`id` and `id@bits` parse; an empty id, empty or non-numeric bits do not")
    func parsing() {
        #expect(SuiteChoice(parsing: "x25519") == SuiteChoice("x25519"))
        #expect(SuiteChoice(parsing: " classic@1024 ") == SuiteChoice("classic", rsaBits: 1024))
        for bad in ["", "@1024", "classic@", "classic@big", "classic@0", "classic@1@2"] {
            #expect(SuiteChoice(parsing: bad) == nil, "'\(bad)'")
        }
        #expect(SuiteChoice.list(parsing: "x25519,classic@1024")?.map(\.description) == ["x25519", "classic@1024"])
        #expect(SuiteChoice.list(parsing: "x25519,,pq") == nil, "an empty item is refused, not skipped")
    }
}

/// The composition root: a server from typed settings, as `lab serve` builds it, without a process.
@Suite(.tier(.unit)) struct ServerAssemblyTests {
    @Test("with no suite list, every suite the provider can do: openssl offers no pq, swift-crypto no classic@512")
    func defaultSuites() throws {
        let openssl = try ServerAssembly.assemble(ServerSettings(provider: "openssl"), plugins: BuiltInPlugins.all)
        #expect(openssl.suites == ["classic", "rsa-modern", "x25519"])
        #expect(openssl.protocols == ["cx/1"])
        // classic at its default 512 bits is below what swift-crypto does.
        let swiftCrypto = try ServerAssembly.assemble(ServerSettings(provider: "swift-crypto"), plugins: BuiltInPlugins.all)
        #expect(swiftCrypto.suites == ["rsa-modern", "x25519", "pq"])
    }

    @Test("a suite the provider cannot do is refused, naming the provider that can")
    func unsupportedSuite() throws {
        let error = #expect(throws: LabError.self) {
            try ServerAssembly.assemble(ServerSettings(provider: "openssl", suites: [SuiteChoice("pq")]), plugins: BuiltInPlugins.all)
        }
        #expect(error?.code == .unsupported)
        #expect(error?.message.contains("swift-crypto") == true, "\(String(describing: error))")
    }

    @Test("an RSA size reaches the suite: classic@512 on swift-crypto is refused, @1024 is served")
    func rsaSize() throws {
        #expect(throws: LabError.self) {
            try ServerAssembly.assemble(ServerSettings(suites: [SuiteChoice("classic", rsaBits: 512)]), plugins: BuiltInPlugins.all)
        }
        let server = try ServerAssembly.assemble(ServerSettings(suites: [SuiteChoice("classic", rsaBits: 1024)]), plugins: BuiltInPlugins.all)
        #expect(server.suites == ["classic"])
    }
}

/// The assembled server on a socket: cx/1, msg/1 and the lab's `serverStats` on one port.
@Suite(.tier(.integration)) struct AssembledServerTests {
    @Test("one port serves cx/1, msg/1 and serverStats, as lab serve does")
    func servesEveryProtocol() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("assembled-" + UUID().uuidString)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var messaging = MessagingSettings(store: folder.appendingPathComponent("m.sqlite").path)
        messaging.options.kdf = .pbkdf2SHA256(iterations: 1_000)
        var protocols = PluginExtensions()
        protocols[MessagingServing.self] = messaging
        let server = try ServerAssembly.assemble(
            ServerSettings(suites: [SuiteChoice("x25519")], protocols: protocols),
            plugins: BuiltInPlugins.all
        )
        #expect(server.protocols == ["cx/1", "msg/1"])
        let socket = try await ServerAssembly.listen(server, transports: BuiltInPlugins.transports)
        #expect(socket.announcement.isEmpty, "tcp presents no certificate")
        try await withCleanup({ await socket.shutdown(grace: .zero) }) {
            let result = try await TestPlan.run(
                """
                {
                  "name": "assembled",
                  "server": { "transport": "tcp", "address": "127.0.0.1:\(socket.port)" },
                  "clients": { "count": 2 },
                  "load": { "iterations": 3, "deadline": "60 s" },
                  "flows": [
                    { "flow": "cx", "suite": "x25519", "weight": 1 },
                    { "flow": "login", "weight": 1, "options": { "kdf": "pbkdf2-sha256", "pbkdf2Iterations": 1000 } }
                  ]
                }
                """
            )
            #expect(result.errorCount == 0, "\(result.groups.map(\.errors))")
            let served = Set(result.groups.filter { $0.flowKind == GroupResult.serverSideKind }.map(\.key.suite))
            // The server's own groups came back by serverStats: the router sent it to the
            // responder, and each protocol's requests to its handler.
            #expect(served.contains("x25519"), "server groups: \(served)")
            #expect(served.contains { $0 != "x25519" }, "msg/1's ops were answered and recorded: \(served)")
        }
    }
}
