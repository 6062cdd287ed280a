import Foundation
import LabCore
import LabReport
import LabResults
import LabTesting
import Testing

/// Bytes on the wire: what a run counts per exchange and per step, against the sizes an
/// independent implementation (the Python peer, `Tests/Interop/cx_peer.py`, from
/// docs/protocol.md alone) gives the same messages, to the byte.
@Suite(.tier(.unit)) struct TrafficTests {
    struct Case: Sendable, CustomStringConvertible {
        var suite: String
        var provider = "swift-crypto"
        var rsaBits: Int? = nil
        var framing: FramingStyle = .u32be
        var legacy = false
        var payloadBytes: Int? = nil

        var description: String {
            var text = self.suite
            if let bits = self.rsaBits { text += "@\(bits)" }
            if self.framing != .u32be { text += " \(self.framing.rawValue)" }
            if self.legacy { text += " legacy" }
            if let bytes = self.payloadBytes { text += " payload \(bytes)" }
            return text
        }

        var options: String {
            var options: [String] = []
            if let bits = self.rsaBits { options.append("\"rsaBits\": \(bits)") }
            if self.legacy { options.append("\"legacy\": true") }
            if let bytes = self.payloadBytes { options.append("\"payloadBytes\": \(bytes)") }
            return options.isEmpty ? "" : ", \"options\": { \(options.joined(separator: ", ")) }"
        }
    }

    static let cases: [Case] = [
        Case(suite: "classic", provider: "openssl", rsaBits: 512, framing: .u64le, legacy: true),
        Case(suite: "classic", rsaBits: 1024),
        Case(suite: "classic", provider: "openssl", rsaBits: 512, payloadBytes: 432),
        Case(suite: "rsa-modern"),
        Case(suite: "rsa-modern", provider: "openssl", rsaBits: 3072, framing: .u64le),
        Case(suite: "x25519"),
        Case(suite: "x25519", provider: "openssl", payloadBytes: 100_000),
        Case(suite: "pq"),
        Case(suite: "pq", framing: .u64le, payloadBytes: 1),
    ]

    @Test("Bytes per exchange equal the Python peer's frames of the same messages, to the byte", arguments: cases)
    func bytesMatchThePythonPeer(_ testCase: Case) async throws {
        // Six per client.
        let iterations = 12
        let result = try await TestPlan.run(
            """
            { "name": "traffic", "server": { "transport": "in-process", "provider": "\(testCase.provider)", "framing": "\(testCase.framing.rawValue)" },
              "clients": { "count": 2 }, "load": { "iterations": \(iterations / 2), "warmupIterations": 2 },
              "flows": [ { "flow": "cx", "suite": "\(testCase.suite)", "provider": "\(testCase.provider)"\(testCase.options) } ] }
            """
        )
        #expect(result.errorCount == 0)
        let group = try #require(result.groups.first)
        // Only the exchange sends, once per measured iteration; warm-up is left out.
        let traffic = try #require(group.traffic[.exchange], "\(group.traffic)")
        #expect(group.iterations == UInt64(iterations))
        #expect(group.traffic.count == 1 && traffic.roundTrips == UInt64(iterations), "\(group.traffic)")
        #expect(
            group.setupTraffic.isEmpty,
            "in process nothing is sent before the first request: \(group.setupTraffic)"
        )

        let peer = try PythonPeer()
        defer { peer.cleanUp() }
        var request = [
            "request", "--suite", testCase.suite, "--framing", testCase.framing.rawValue,
            "--key-out", peer.path("client.key"), "--out", peer.path("request.frame"),
        ]
        if let bits = testCase.rsaBits { request += ["--rsa-bits", "\(bits)"] }
        if testCase.legacy { request.append("--legacy") }
        let made = try await peer.run(request)
        #expect(made.status == 0, "\(made.output) \(made.errors)")
        var respond = [
            "respond", "--framing", testCase.framing.rawValue, "--in", peer.path("request.frame"), "--out",
            peer.path("response.frame"),
        ]
        if let bytes = testCase.payloadBytes { respond += ["--payload-bytes", "\(bytes)"] }
        let answered = try await peer.run(respond)
        #expect(answered.status == 0, "\(answered.output) \(answered.errors)")
        let sent = try peer.read("request.frame").count
        let received = try peer.read("response.frame").count

        // Every exchange of a suite has the same size, so the totals are exact multiples.
        #expect(
            traffic.sent == UInt64(iterations * sent),
            "lab sent \(traffic.sent) in \(iterations); the peer's request frame is \(sent) B"
        )
        #expect(
            traffic.received == UInt64(iterations * received),
            "lab received \(traffic.received) in \(iterations); the peer's response frame is \(received) B"
        )
        let perIteration = try #require(group.bytesPerIteration)
        #expect(perIteration.sent == Double(sent) && perIteration.received == Double(received))
    }
}
