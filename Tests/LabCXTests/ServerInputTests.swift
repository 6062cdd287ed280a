import Foundation
import LabBuiltIns
import LabCX
import LabCore
import LabOpenSSL
import LabSwiftCrypto
import LabTestSupport
import LabWire
import Testing

/// The server answers every bad request with the error docs/protocol.md §2.3 names, and never
/// crashes.
@Suite(.tier(.unit)) struct ServerInputTests {
    static func server() throws -> CXServer<OpenSSLProvider> {
        var steps = NoStepRecorder()
        return try CXServer(
            provider: try OpenSSLProvider(),
            options: CXServerOptions(suites: [try ClassicSuite(), try RSAModernSuite(), X25519Suite()]),
            knownSuites: BuiltInPlugins.suites.ids,
            recorder: &steps
        )
    }

    static func request(_ fields: [String: Any]) throws -> [UInt8] {
        var plist = PropertyListDictionary()
        for (key, value) in fields {
            switch value {
            case let text as String: plist.set(key, string: text)
            case let bytes as [UInt8]: plist.set(key, data: bytes)
            case let number as Int: plist.set(key, integer: number)
            default: Issue.record("unsupported test value")
            }
        }
        return try plist.encoded()
    }

    static func answerCode(_ body: [UInt8]) throws -> CXErrorCode? {
        try self.answerCode(body, server: try Self.server())
    }

    static func answerCode(_ body: [UInt8], provider name: String) throws -> CXErrorCode? {
        try self.answerCode(body, provider: Providers.named(name))
    }

    private static func answerCode<P: CryptoProvider>(_ body: [UInt8], provider: P) throws -> CXErrorCode? {
        var steps = NoStepRecorder()
        let suites = BuiltInPlugins.suites.ids.compactMap { id in
            (try? BuiltInPlugins.suites.make(id, options: SuiteOptions(rsaBits: id == "classic" ? 1024 : nil)))
        }.filter { $0.unsupportedReason(on: provider) == nil }
        return try self.answerCode(
            body,
            server: try CXServer(provider: provider, options: CXServerOptions(suites: suites), recorder: &steps)
        )
    }

    private static func answerCode<P: CryptoProvider>(_ body: [UInt8], server: CXServer<P>) throws -> CXErrorCode? {
        var steps = NoStepRecorder()
        let answer = server.respond(to: body, recorder: &steps)
        let reply = try CXReply(decoding: answer.body)
        guard case .error(let error) = reply else { return nil }
        #expect(answer.error == error, "the answer reports the error it sent, for the log")
        #expect(!error.message.isEmpty)
        return error.code
    }

    @Test("An unknown suite is unknownSuite; its name is not kept as the answer's suite, and is cut in the message")
    func unknownSuite() throws {
        #expect(
            try Self.answerCode(try Self.request(["suite": "rot13", "cryptoP": [UInt8](repeating: 1, count: 32)]))
                == .unknownSuite
        )
        // The answer's suite becomes a group of the server's recording, kept for its life.
        var steps = NoStepRecorder()
        let long = String(repeating: "z", count: 100_000)
        let answer = try Self.server().respond(
            to: try Self.request(["suite": long, "cryptoP": [UInt8](repeating: 1, count: 32)]),
            recorder: &steps
        )
        #expect(answer.error?.code == .unknownSuite)
        #expect(answer.suite == nil)
        #expect(answer.error.map { $0.message.count < 200 } == true, "the message quotes 64 characters at most")
    }

    @Test("A known suite the server does not offer is unsupported, and is the answer's suite")
    func notOffered() throws {
        #expect(
            try Self.answerCode(try Self.request(["suite": "pq", "cryptoP": [UInt8](repeating: 1, count: 1184)]))
                == .unsupported
        )
        var steps = NoStepRecorder()
        let answer = try Self.server().respond(
            to: try Self.request(["suite": "pq", "cryptoP": [UInt8](repeating: 1, count: 1184)]),
            recorder: &steps
        )
        #expect(answer.suite == "pq")
    }

    @Test("Missing or mistyped fields are badRequest")
    func badRequests() throws {
        #expect(try Self.answerCode(try Self.request(["suite": "x25519"])) == .badRequest)
        #expect(try Self.answerCode(try Self.request(["cryptoP": [UInt8](repeating: 9, count: 32)])) == .badRequest)
        #expect(
            try Self.answerCode(try Self.request(["suite": 7, "cryptoP": [UInt8](repeating: 9, count: 32)]))
                == .badRequest
        )
        #expect(try Self.answerCode(try Self.request(["suite": "x25519", "cryptoP": "not data"])) == .badRequest)
        // A plist whose top level is not a dictionary.
        let array = try PropertyListSerializationShim.binaryArray()
        #expect(try Self.answerCode(array) == .badRequest)
        // Starts like a plist but is not one.
        #expect(try Self.answerCode(Array("bplist00 and then garbage".utf8)) == .badRequest)
    }

    @Test(
        "Bad public keys are badPublicKey",
        arguments: [
            ("x25519", [UInt8](repeating: 9, count: 31)),
            ("x25519", [UInt8](repeating: 0, count: 32)),  // the all-zero (low-order) point
            ("rsa-modern", [UInt8](repeating: 0x30, count: 270)),
        ]
    )
    func badKeys(_ suite: String, _ key: [UInt8]) throws {
        #expect(try Self.answerCode(try Self.request(["suite": suite, "cryptoP": key])) == .badPublicKey)
    }

    @Test("Low-order X25519 keys are badPublicKey on every provider", arguments: ["openssl", "swift-crypto"])
    func lowOrderPoints(_ provider: String) throws {
        // 0 and 1 are points of small order: the shared secret would be all zeros, and the
        // session key would be wrapped under a KEK anyone can compute.
        for point in [[UInt8](repeating: 0, count: 32), [1] + [UInt8](repeating: 0, count: 31)] {
            let body = try Self.request(["suite": "x25519", "cryptoP": point])
            #expect(try Self.answerCode(body, provider: provider) == .badPublicKey, "\(point.prefix(2))")
        }
    }

    @Test("RSA keys must be exactly PKCS#1 DER on every provider", arguments: ["openssl", "swift-crypto"])
    func pkcs1Only(_ provider: String) throws {
        let openssl = try OpenSSLProvider()
        let pkcs1 = try openssl.encode(try openssl.generatePrivateKey(.rsa(bits: 2048, use: .encryption)))
        #expect(
            try Self.answerCode(try Self.request(["suite": "rsa-modern", "cryptoP": pkcs1]), provider: provider) == nil
        )
        // The same key inside SubjectPublicKeyInfo, and with a trailing byte.
        let algorithm: [UInt8] = [
            0x30, 0x0D, 0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01, 0x05, 0x00,
        ]
        let bitString = DER.element(0x03, [0x00] + pkcs1)
        let spki = DER.element(0x30, algorithm + bitString)
        for key in [spki, pkcs1 + [0]] {
            #expect(
                try Self.answerCode(try Self.request(["suite": "rsa-modern", "cryptoP": key]), provider: provider)
                    == .badPublicKey
            )
        }
        // An even modulus parses as DER but is no RSA key.
        var even = pkcs1
        even[even.count - 6] &= 0xFE  // the modulus's last byte, before `02 03 01 00 01`
        #expect(
            try Self.answerCode(try Self.request(["suite": "rsa-modern", "cryptoP": even]), provider: provider)
                == .badPublicKey
        )
    }

    @Test("AES key wrap refuses input that is not whole 64-bit blocks", arguments: ["openssl", "swift-crypto"])
    func keyWrapLengths(_ name: String) throws {
        let provider = Providers.named(name)
        let kek = [UInt8](repeating: 7, count: 32)
        for length in [0, 8, 15, 17] {
            #expect(throws: LabError.self, "wrap \(length)") {
                try provider.aesKeyWrap([UInt8](repeating: 1, count: length), kek: kek)
            }
        }
        for length in [0, 8, 16, 41] {
            #expect(throws: LabError.self, "unwrap \(length)") {
                try provider.aesKeyUnwrap([UInt8](repeating: 1, count: length), kek: kek)
            }
        }
    }

    @Test("An RSA key of a size the suite does not allow is badPublicKey")
    func wrongRSASize() throws {
        let provider = try OpenSSLProvider()
        let key = try provider.encode(try provider.generatePrivateKey(.rsa(bits: 1024, use: .encryption)))
        #expect(try Self.answerCode(try Self.request(["suite": "rsa-modern", "cryptoP": key])) == .badPublicKey)
    }

    @Test("Garbage that is not a plist is a legacy request with a bad key")
    func garbage() throws {
        #expect(try Self.answerCode(Array("hello, server".utf8)) == .badPublicKey)
    }

    @Test("A client sees the server's error as serverError")
    func clientSeesServerError() throws {
        let provider = try OpenSSLProvider()
        var steps = NoStepRecorder()
        let client = try CXClient(provider: provider, options: CXClientOptions(suite: X25519Suite()), recorder: &steps)
        let body = try CXErrorReply(code: .busy, message: "too many connections").encoded()
        let error = try #require(throws: LabError.self) { try client.open(body, recorder: &steps) }
        #expect(error.code == .serverError)
        #expect(error.message.contains("busy") && error.message.contains("too many connections"))
    }

    @Test("A response for another suite is refused")
    func suiteEcho() throws {
        let provider = try OpenSSLProvider()
        var steps = NoStepRecorder()
        var client = try CXClient(provider: provider, options: CXClientOptions(suite: X25519Suite()), recorder: &steps)
        let server = try Self.server()
        let body = server.respond(to: try client.makeRequest(recorder: &steps), recorder: &steps).body
        guard case .response(var response) = try CXReply(decoding: body) else {
            Issue.record("expected a response")
            return
        }
        response.suite = "rsa-modern"
        let error = try #require(throws: LabError.self) { try client.open(try response.encoded(), recorder: &steps) }
        #expect(error.code == .malformedMessage)
    }

    @Test("swift-crypto refuses the 512-bit classic key with a message that names openssl")
    func swiftCryptoClassic512() throws {
        let error = try #require(throws: LabError.self) {
            var steps = NoStepRecorder()
            _ = try CXServer(
                provider: SwiftCryptoProvider(),
                options: CXServerOptions(suites: [try ClassicSuite(rsaBits: 512)]),
                others: [try OpenSSLProvider()],
                recorder: &steps
            )
        }
        #expect(error.code == .unsupported)
        #expect(
            error.message.contains("swift-crypto") && error.message.contains("classic")
                && error.message.contains("openssl")
        )
        #expect(error.message.contains("1024"), "says why: \(error.message)")
    }
}

/// A binary plist whose top level is an array (the lab's codec only writes dictionaries).
enum PropertyListSerializationShim {
    static func binaryArray() throws -> [UInt8] {
        Array(try PropertyListSerialization.data(fromPropertyList: ["suite", "x25519"], format: .binary, options: 0))
    }
}

/// Just enough DER to wrap a key for the tests.
enum DER {
    static func element(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        let count = content.count
        let length: [UInt8] =
            count < 0x80
            ? [UInt8(count)] : count < 0x100 ? [0x81, UInt8(count)] : [0x82, UInt8(count >> 8), UInt8(count & 0xFF)]
        return [tag] + length + content
    }
}
