import Foundation
import LabCore
import LabMessaging
import LabReport
import LabResults
import LabTestSupport
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

/// What msg/1's HPKE suite costs on the wire: X-Wing's keys and encapsulations against X25519's.
@Suite(.tier(.unit)) struct HPKETrafficTests {
    static func run(_ hpke: String) async throws -> GroupResult {
        let result = try await TestPlan.run(
            """
            { "name": "hpke", "server": { "transport": "in-process" }, "clients": { "count": 2 },
              "load": { "iterations": 3 },
              "flows": [ { "flow": "login", "options": { "kdf": "sha512-salted", "hpke": "\(hpke)" } },
                         { "flow": "chat", "options": { "kdf": "sha512-salted", "hpke": "\(hpke)" } } ] }
            """
        )
        #expect(result.errorCount == 0, "\(hpke): \(result.groups.map(\.errors))")
        return try #require(result.groups.first { $0.key.flow == "login" })
    }

    @Test(
        "msg/1 over X-Wing runs every flow; a login sends 1,088 B more (the encapsulation) and its captcha brings 1,184 B more (the key)"
    )
    func xwingCostsItsSizes() async throws {
        let x25519 = try await Self.run("x25519")
        let xwing = try await Self.run("xwing")
        func perTrip(_ group: GroupResult, _ step: Step) throws -> (sent: Double, received: Double) {
            let traffic = try #require(group.traffic[step] ?? group.setupTraffic[step], "\(step): \(group.traffic)")
            return (
                Double(traffic.sent) / Double(traffic.roundTrips), Double(traffic.received) / Double(traffic.roundTrips)
            )
        }
        // X-Wing's encapsulation is 1,120 bytes, X25519's 32; its public key 1,216 bytes, X25519's 32.
        // The plist takes a few bytes more: a data object's longer length field and, past 255
        // bytes of body, a second byte for each object's offset (1,100 and 1,195 B measured).
        let login = (try perTrip(xwing, .login).sent - (try perTrip(x25519, .login).sent))
        #expect(abs(login - 1_088) <= 16, "a login request grew by \(login) B")
        let captcha = (try perTrip(xwing, .captcha).received - (try perTrip(x25519, .captcha).received))
        #expect(abs(captcha - 1_184) <= 16, "a captcha answer grew by \(captcha) B")
    }
}
