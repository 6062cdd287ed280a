import Foundation
import LabCore
import LabResults
import LabTestSupport
import Testing

/// The `handshake` step's bytes against an independent count of the same connections: a
/// relay between the lab's clients and `lab serve --tls` that reads the TLS records
/// (`Tests/Interop/tls_count.py`).
@Suite(.tier(.integration)) struct HandshakeBytesTests {
    @Test(
        "Handshake bytes equal the relay's count of the TLS records, with X25519 and with X25519MLKEM768",
        arguments: ["x25519", "x25519-mlkem768"]
    )
    func handshakeBytesMatchTheWire(group: String) async throws {
        let (server, address) = try await LabProcess.serve(["--tls", "--no-messaging", "--suites", "x25519"])
        defer { server.terminate() }
        let pin = try await server.line(startingWith: "tls: spki sha256/", timeout: .seconds(5))
            .dropFirst("tls: spki sha256/".count)
        let relay = try ServerProcess(
            URL(fileURLWithPath: "/usr/bin/env"),
            [
                "python3", RepositoryPaths.interop.appendingPathComponent("tls_count.py").path, "127.0.0.1",
                "\(address.port)",
            ]
        )
        defer { relay.terminate() }
        let listening = try await relay.line(startingWith: "listening on ", timeout: .seconds(10))
        let clients = 3
        let result = try await TestPlan.run(
            """
            { "name": "handshake-bytes",
              "server": { "transport": "tls", "address": "\(listening.dropFirst("listening on ".count))", "serverStats": false,
                          "tls": { "pin": { "spkiSHA256": "\(pin)" }, "groups": ["\(group)"] } },
              "clients": { "count": \(clients) }, "load": { "iterations": 2 },
              "flows": [ { "flow": "cx", "suite": "x25519" } ] }
            """
        )
        #expect(result.errorCount == 0)
        let handshake = try #require(result.groups.first?.setupTraffic[.handshake])
        #expect(handshake.roundTrips == UInt64(clients))
        #expect(result.groups.first?.outcomes["tls.group.\(group)"] == UInt64(clients))
        // One more connection than clients: the run first reaches the server once, and closes,
        // before any client connects; its line comes first.
        let counted = try await relay.lines(count: clients + 2, timeout: .seconds(10)).dropFirst().map { line in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Int])
            return (sent: try #require(object["sent"]), received: try #require(object["received"]))
        }
        let clientsCounted = counted.dropFirst()
        #expect(clientsCounted.count == clients)
        // Every ClientHello of one configuration has one size: so has each client's flight.
        #expect(Set(counted.map(\.sent)).count == 1, "\(counted)")
        #expect(
            handshake.sent == UInt64(clientsCounted.reduce(0) { $0 + $1.sent }),
            "lab \(handshake), relay \(counted)"
        )
        // The server's flights vary by a byte or two (its signature's DER): each one counted.
        #expect(
            handshake.received == UInt64(clientsCounted.reduce(0) { $0 + $1.received }),
            "lab \(handshake), relay \(counted)"
        )
    }
}
