import Foundation
import LabBuiltIns
import LabCore
import LabResults
import LabRunner
import LabScenario
import LabTestSupport
import LabTransports
import NIOSSL
import Testing

/// The pinned `tls` client trusts exactly one server identity and refuses a man in the middle
/// before any request is sent. Certificates come from openssl (`generate-certs.sh`), and the
/// fingerprints the tests expect are computed by openssl too.
@Suite(.tier(.integration)) struct PinningTests {
    static func tls(serving name: String, pin: CertificatePin, certificates: TestCertificates) throws -> any Transport {
        try TLSTransport(
            options: TransportOptions(
                tls: TLSSettings(
                    certificateFile: certificates.certificate(name),
                    privateKeyFile: certificates.key(name),
                    pin: pin
                )
            )
        )
    }

    @Test("The lab's SPKI SHA-256 is openssl's, and both pin forms accept the right server")
    func pinnedServerIsAccepted() async throws {
        let certificates = try await TestCertificates()
        defer { certificates.cleanUp() }
        let opensslSPKI = try await certificates.opensslSPKI("server")
        let leaf = try NIOSSLCertificate.fromPEMFile(certificates.certificate("server"))[0]
        #expect(Fingerprint.base64(try Fingerprint.spkiSHA256(leaf)) == opensslSPKI)

        let spki = try #require(PinSpec.digest(opensslSPKI))
        for pin in [CertificatePin.certificateFile(certificates.certificate("server")), .spkiSHA256(spki)] {
            let handler = TransportConformance.ReversingHandler()
            let endpoint = try await Self.tls(serving: "server", pin: pin, certificates: certificates).serve(handler)
            try await withEndpoint(endpoint) { endpoint in
                var recorder = StepTimings()
                let connection = try await endpoint.connect(recorder: &recorder)
                #expect(try await connection.request([1, 2, 3], recorder: &recorder) == [3, 2, 1])
                #expect(recorder.steps.contains(.connect))
                await connection.close()
            }
        }
    }

    @Test("A server with another certificate is refused with pinMismatch naming both, and gets no request")
    func manInTheMiddleIsRefused() async throws {
        let certificates = try await TestCertificates()
        defer { certificates.cleanUp() }
        let handler = TransportConformance.ReversingHandler()
        // The server presents `other`; the client pins `server`.
        let endpoint = try await Self.tls(
            serving: "other",
            pin: .certificateFile(certificates.certificate("server")),
            certificates: certificates
        ).serve(handler)
        try await withEndpoint(endpoint) { endpoint in
            var recorder = StepTimings()
            let error = await #expect(throws: LabError.self) { _ = try await endpoint.connect(recorder: &recorder) }
            #expect(error?.code == .pinMismatch)
            let message = error?.message ?? ""
            let presented = try await certificates.opensslFingerprint("other")
            let pinned = try await certificates.opensslFingerprint("server")
            let presentedSPKI = try await certificates.opensslSPKI("other")
            #expect(message.contains(presented), "names what was presented: \(message)")
            #expect(message.contains(pinned), "names what is pinned: \(message)")
            #expect(message.contains(presentedSPKI))
            #expect(handler.seen.count == 0, "no request reached the server")
            #expect(recorder.entries.isEmpty, "no connect is recorded for a refused server")
        }
    }

    @Test("openssl s_server with another certificate is refused; pinned to its own key, the same client connects")
    func opensslServerIsRefused() async throws {
        let certificates = try await TestCertificates()
        defer { certificates.cleanUp() }
        let server = try ServerProcess(
            URL(fileURLWithPath: "/usr/bin/openssl"),
            [
                "s_server", "-accept", "127.0.0.1:0", "-cert", certificates.certificate("other"), "-key",
                certificates.key("other"), "-www",
            ]
        )
        defer { server.terminate() }
        let accept = try await server.line(startingWith: "ACCEPT", timeout: .seconds(10))
        let port = try #require(Int(accept.split(separator: ":").last ?? ""), "s_server printed '\(accept)'")

        let pinnedServer = try TLSTransport(
            options: TransportOptions(tls: TLSSettings(pin: .certificateFile(certificates.certificate("server"))))
        )
        var recorder = StepTimings()
        let refused = try await pinnedServer.remote(host: "127.0.0.1", port: port)
        let error = await #expect(throws: LabError.self) { _ = try await refused.connect(recorder: &recorder) }
        #expect(error?.code == .pinMismatch)
        #expect(error?.message.contains(try await certificates.opensslSPKI("other")) == true)
        #expect(recorder.entries.isEmpty, "a refused server records no connect")

        // (`-www`: s_server serves a status page and does not quit when its stdin ends.)
        // The control: pinned to s_server's own public key (as openssl computes it), the same
        // client completes the handshake and its bytes arrive, so the refusal above was the pin.
        let spki = try #require(PinSpec.digest(try await certificates.opensslSPKI("other")))
        let pinnedOther = try TLSTransport(options: TransportOptions(tls: TLSSettings(pin: .spkiSHA256(spki))))
        let accepted = try await pinnedOther.remote(host: "127.0.0.1", port: port)
        let connection = try await accepted.connect(recorder: &recorder)
        await connection.close()
        #expect(recorder.steps.contains(.connect))
    }

    @Test("A run against a man in the middle: every exchange fails with pinMismatch, none reaches the server")
    func runAgainstAnImpostor() async throws {
        let certificates = try await TestCertificates()
        defer { certificates.cleanUp() }
        let json = """
            {
              "name": "impostor",
              "server": {
                "transport": "tls",
                "tls": {
                  "certificate": "\(certificates.certificate("other"))", "key": "\(certificates.key("other"))",
                  "pin": { "certificate": "\(certificates.certificate("server"))" }
                }
              },
              "clients": { "count": 2 },
              "load": { "iterations": 3 },
              "flows": [ { "flow": "cx", "suite": "x25519" } ]
            }
            """
        let result = try await TestPlan.run(json)
        let group = try #require(result.groups.first)
        #expect(group.errors == ["pinMismatch": 6])
        #expect(group.steps[.sign] == nil && group.steps[.exchange] == nil, "the server never answered")
    }
}
