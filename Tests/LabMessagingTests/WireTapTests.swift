import Foundation
import LabBuiltIns
import LabCore
import LabMessaging
import LabResults
import LabRunner
import LabTestSupport
import LabTransports
import Testing

/// A `chat` scenario over tcp through a wire tap (a relay that records every byte both
/// ways): no plaintext message, no password and no chat key appears in what it captured.
@Suite(.tier(.load), .serialized) struct WireTapTests {
    @Test func chatOverTCPShowsNoSecretsOnTheWire() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tap-" + UUID().uuidString)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let capture = folder.appendingPathComponent("capture.bin")
        let secrets = folder.appendingPathComponent("secrets.txt")

        let store = try MessagingStore(path: folder.appendingPathComponent("m.sqlite").path)
        let service = MessagingService(
            store: store,
            options: MessagingOptions(kdf: .pbkdf2SHA256(iterations: 1000)),
            kinds: BuiltInPlugins.messagingKinds,
            clock: VirtualClock()
        )
        let endpoint = try await TCPTransport(options: TransportOptions()).serve(service)
        try await withEndpoint(endpoint) { endpoint in
            let upstream = try #require(endpoint.address?.split(separator: ":").map(String.init))
            let tap = try ServerProcess(
                URL(fileURLWithPath: "/usr/bin/env"),
                [
                    "python3", RepositoryPaths.interop.appendingPathComponent("tap.py").path, upstream[0], upstream[1],
                    capture.path,
                ]
            )
            defer { tap.terminate() }
            let tapped = try await ListeningAddress.of(tap, timeout: .seconds(20))

            let clients = 4
            let iterations = 10
            let result = try await TestPlan.run(
                """
                {
                  "name": "chat-tap",
                  "server": { "transport": "tcp", "address": "\(tapped)" },
                  "clients": { "count": \(clients) },
                  "load": { "model": "closed", "iterations": \(iterations) },
                  "flows": [ { "flow": "chat", "options": { "secretLog": "\(secrets.path)", "messageBytes": 64 } } ]
                }
                """
            )
            #expect(result.errorCount == 0)
            #expect(result.completedIterations == clients * iterations)

            let captured = try [UInt8](Data(contentsOf: capture))
            let logged = try String(contentsOf: secrets, encoding: .utf8).split(separator: "\n").map { line in
                let parts = line.split(separator: " ")
                return (kind: String(parts[0]), bytes: [UInt8](hex: parts[1]) ?? [])
            }
            // The controls: the tap saw the traffic, and the log holds every secret the run used.
            #expect(captured.count > clients * iterations * 64)
            #expect(Self.contains(captured, Array("-alice".utf8)))
            #expect(logged.filter { $0.kind == "message" }.count == clients * iterations)
            #expect(logged.filter { $0.kind == "password" }.count == 2 * clients)
            #expect(logged.filter { $0.kind == "chat-key" }.count == clients)

            for (kind, bytes) in logged {
                #expect(bytes.count >= 16, "\(kind) too short to search for")
                #expect(!Self.contains(captured, bytes), "a \(kind) crossed the wire in the clear")
                // Not even a recognisable part of it.
                #expect(!Self.contains(captured, Array(bytes.prefix(12))), "the start of a \(kind) crossed the wire")
            }
            #expect(!Self.contains(captured, Array("message 1 from".utf8)))
        }
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, haystack.count >= needle.count else { return false }
        let first = needle[0]
        var index = 0
        let last = haystack.count - needle.count
        while index <= last {
            if haystack[index] == first, haystack[index..<(index + needle.count)].elementsEqual(needle) { return true }
            index += 1
        }
        return false
    }
}
