import LabBuiltIns
import LabCX
import LabCore
import LabFuzzSupport
import LabWire

/// cx/1 from both ends: the server answering a request body, or a client opening a reply.
///
/// Input: byte 0 picks the side (bit 0: server or client) and which of the servers (one per
/// provider, every suite it supports) or clients (one per provider and suite) takes the rest
/// of the input as its body.
///
/// The server is `CXServer`, which `lab serve`'s cx/1 handler calls for every frame. Server
/// properties: the answer is a cx/1 reply (docs/protocol.md §2.3), a response exactly when
/// the connection stays open, an error with a code of §2.3 otherwise; a response's suite is
/// one the server offers. Client properties: a reply that decodes encodes and decodes back to
/// itself; a client opening any reply fails with a `LabError` or a `CXVerdict` (no fuzzed reply can carry a
/// valid signature and wrapped key for the client's fresh key) or yields the payload.
public enum CXTarget {
    private struct Fixture: Sendable {
        var servers: [Server]
        var clients: [Client]
    }

    /// A `CXServer` (what `lab serve`'s cx/1 handler calls for every frame), type-erased.
    private struct Server: Sendable {
        var provider: String
        var suites: [String]
        var server: any Answering
    }

    private struct Client: Sendable {
        var label: String
        var open: @Sendable ([UInt8]) throws -> [UInt8]
    }

    private static let fixture: Fixture = {
        var fixture = Fixture(servers: [], clients: [])
        let providers: [any CryptoProvider] = BuiltInPlugins.providers.types.compactMap { try? $0.init() }
        for provider in providers {
            let suites = BuiltInPlugins.suites.ids.compactMap { try? BuiltInPlugins.suites.make($0) }
                .filter { $0.unsupportedReason(on: provider) == nil }
            do {
                fixture.servers.append(
                    Server(provider: provider.name, suites: suites.map(\.id), server: try Self.server(provider, suites))
                )
            } catch {
                fatalError("cannot start a cx/1 server on \(provider.name): \(error)")
            }
            for suite in suites {
                if let client = Self.client(provider, suite) { fixture.clients.append(client) }
            }
        }
        return fixture
    }()

    private static func server<P: CryptoProvider>(_ provider: P, _ suites: [any Suite]) throws -> any Answering {
        var keygen = NoStepRecorder()
        let server = try CXServer(provider: provider, options: CXServerOptions(suites: suites), recorder: &keygen)
        return Answerer(server: server)
    }

    private static func client<P: CryptoProvider>(_ provider: P, _ suite: any Suite) -> Client? {
        var keygen = NoStepRecorder()
        guard let client = try? CXClient(provider: provider, options: CXClientOptions(suite: suite), recorder: &keygen)
        else { return nil }
        return Client(label: "\(provider.name)/\(suite.id)") { body in
            var recorder = NoStepRecorder()
            return try client.open(body, recorder: &recorder)
        }
    }

    /// One input from libFuzzer (`Fuzz/Targets/cx`), on libFuzzer's thread: no task, no
    /// allocation that outlives the input (libFuzzer takes one for a leak and runs LeakSanitizer).
    public static func fuzz(_ data: UnsafePointer<UInt8>?, _ count: Int) {
        fuzzInput("cx", data, count, Self.run)
    }

    /// Runs one input; throws `FuzzFailure` when a property does not hold.
    public static func run(_ input: [UInt8]) throws {
        guard let selector = input.first else { return }
        let body = Array(input.dropFirst())
        if selector & 1 == 0 {
            try Self.server(Int(selector >> 1), body)
        } else {
            try Self.client(Int(selector >> 1), body)
        }
    }

    private static func server(_ pick: Int, _ body: [UInt8]) throws {
        let server = Self.fixture.servers[pick % Self.fixture.servers.count]
        let answer = server.server.respond(body)
        let reply: CXReply
        do {
            reply = try CXReply(decoding: answer.body)
        } catch {
            throw FuzzFailure("the \(server.provider) server's answer is not a cx/1 reply: \(error)")
        }
        switch reply {
        case .response(let response):
            try expect(answer.error == nil, "a response closed the connection (\(String(describing: answer.error)))")
            if let suite = response.suite {
                try expect(server.suites.contains(suite), "a response for suite '\(suite)', which is not served")
            }
        case .error:
            try expect(answer.error != nil, "an error answer left the connection open")
        }
    }

    private static func client(_ pick: Int, _ body: [UInt8]) throws {
        if let reply = try? CXReply(decoding: body) {
            let again: CXReply
            do {
                again = try CXReply(decoding: try reply.encoded())
            } catch {
                throw FuzzFailure("a decoded reply does not encode and decode again: \(error)")
            }
            try expect(again == reply, "a reply changed on its way through encode and decode")
        }
        let client = Self.fixture.clients[pick % Self.fixture.clients.count]
        do {
            let payload = try client.open(body)
            try expect(payload == Payload.standard, "the \(client.label) client accepted a reply with another payload")
        } catch is LabError, is CXVerdict {
            // The expected outcomes for a fuzzed reply: it does not decode, or a check fails.
        } catch let failure as FuzzFailure {
            throw failure
        } catch {
            throw FuzzFailure("the \(client.label) client threw something other than a LabError or CXVerdict: \(error)")
        }
    }
}

/// One `CXServer`, whatever its provider.
private protocol Answering: Sendable {
    func respond(_ body: [UInt8]) -> CXServerAnswer
}

private struct Answerer<P: CryptoProvider>: Answering {
    let server: CXServer<P>

    func respond(_ body: [UInt8]) -> CXServerAnswer {
        var recorder = NoStepRecorder()
        return self.server.respond(to: body, recorder: &recorder)
    }
}
