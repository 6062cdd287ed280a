import Foundation
import LabCore
import LabTesting
import Testing

/// Issue 37 ("TLS 1.2 with ECDHE-ECDSA-AES128-SHA (CBC) is accepted by default; failed
/// handshakes each log a warning with BoringSSL's source path, with no rate limit"), checked
/// with the `openssl` command line against `lab serve --tls`.
@Suite(.tier(.integration), .timeLimit(.minutes(3)))
struct TLSHardeningTests {
    /// `openssl s_client` at TLS 1.2 offering only `cipher`: whether the handshake succeeded.
    static func handshake(port: Int, cipher: String) async throws -> Bool {
        let client = try await ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/timeout"),
            [
                "20", "/bin/sh", "-c",
                "openssl s_client -connect 127.0.0.1:\(port) -tls1_2 -cipher \(cipher) < /dev/null 2>&1",
            ]
        )
        return client.output.contains("Cipher is \(cipher)")
    }

    @Test("lab serve --tls takes TLS 1.2 with AEAD suites only; 50 failed handshakes log one warning, without source paths")
    func onlyAEADAndQuietFailures() async throws {
        let (server, address) = try await LabProcess.serve(["--tls", "--suites", "x25519"])
        defer { server.terminate() }
        #expect(try await Self.handshake(port: address.port, cipher: "ECDHE-ECDSA-AES128-GCM-SHA256"))
        for cbc in ["ECDHE-ECDSA-AES128-SHA", "ECDHE-ECDSA-AES256-SHA"] {
            #expect(try await Self.handshake(port: address.port, cipher: cbc) == false, "\(cbc) was accepted")
        }
        for _ in 0..<48 {
            _ = try await Self.handshake(port: address.port, cipher: "ECDHE-ECDSA-AES128-SHA")
        }
        // 50 failures: the first is a warning; the 1,000th would be the next.
        try await server.errors(containing: "TLS failed", timeout: .seconds(10))
        let warnings = server.errors.split(separator: "\n").filter { $0.contains("TLS failed") }
        #expect(warnings.count == 1, "\(warnings.count) TLS failure lines: \(warnings.prefix(3))")
        #expect(!warnings.contains { $0.contains(".cc:") || $0.contains(" at /") }, "\(warnings.first ?? "")")
    }
}
