import Foundation
import LabCX
public import LabCore
import LabFraming
import LabWire

/// A provider against the independent cx/1 peer (`PythonPeer`, Python's `cryptography`): the
/// checks every built-in provider passes (`InteropTests`), for a provider written anywhere.
/// Each throws an `InteropFailure` saying which side refused what.
public enum ProviderInterop {
    /// What went wrong.
    public struct InteropFailure: Error, CustomStringConvertible {
        /// The explanation.
        public var description: String
    }

    /// The Python client makes a request for `suite`, a lab server on `provider` answers it,
    /// and the Python client opens the answer and finds the standard payload.
    public static func labServesPeer<P: CryptoProvider>(_ provider: P, suite: any Suite) async throws {
        let peer = try PythonPeer()
        defer { peer.cleanUp() }
        var request = ["request", "--suite", suite.id, "--key-out", peer.path("client.key"), "--out", peer.path("request.frame")]
        if let bits = suite.rsaBits { request += ["--rsa-bits", "\(bits)"] }
        try Self.require(try await peer.run(request), "the Python client could not make a request")
        var steps = NoStepRecorder()
        let server = try CXServer(provider: provider, options: CXServerOptions(suites: [suite]), recorder: &steps)
        let answer = server.respond(to: try FrameParser.singleFrame(try peer.read("request.frame")), recorder: &steps)
        if let error = answer.error {
            throw InteropFailure(description: "\(provider.name) refused the Python client's \(suite.id) request: \(error)")
        }
        try peer.write("response.frame", try Framing.standard.frame(answer.body))
        let opened = try await peer.run([
            "open", "--suite", suite.id, "--key", peer.path("client.key"), "--request", peer.path("request.frame"),
            "--in", peer.path("response.frame"),
        ])
        try Self.require(opened, "the Python client refused \(provider.name)'s \(suite.id) response")
        guard opened.json["plaintext_hex"] == Payload.standard.hexString else {
            throw InteropFailure(description: "the Python client read another payload from \(provider.name): \(opened.output)")
        }
    }

    /// A lab client on `provider` makes a request for `suite`, the Python server answers it,
    /// and the lab client opens the answer and finds the standard payload.
    public static func peerServesLab<P: CryptoProvider>(_ provider: P, suite: any Suite) async throws {
        let peer = try PythonPeer()
        defer { peer.cleanUp() }
        var steps = NoStepRecorder()
        var client = try CXClient(provider: provider, options: CXClientOptions(suite: suite), recorder: &steps)
        try peer.write("request.frame", try Framing.standard.frame(try client.makeRequest(recorder: &steps)))
        var respond = ["respond", "--in", peer.path("request.frame"), "--out", peer.path("response.frame")]
        if let bits = suite.rsaBits { respond += ["--rsa-bits", "\(bits)"] }
        try Self.require(try await peer.run(respond), "the Python server refused \(provider.name)'s \(suite.id) request")
        let plaintext = try client.open(try FrameParser.singleFrame(try peer.read("response.frame")), recorder: &steps)
        guard plaintext == Payload.standard else {
            throw InteropFailure(description: "\(provider.name) read another payload from the Python server")
        }
    }

    private static func require(_ result: PythonPeer.Result, _ what: String) throws {
        guard result.status == 0 else {
            throw InteropFailure(description: "\(what): \(result.output) \(result.errors)")
        }
    }
}
