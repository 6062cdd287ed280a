import LabKit

/// derive/1, a protocol this package adds to `lab serve`: the client sends input key material
/// and a context, the server answers the 32 bytes HKDF-SHA256 derives from them on its
/// provider, and the client derives them again on its own. Two providers that disagree on
/// HKDF disagree here, over a real socket.
///
/// A request is a property-list dictionary `{op: "derive", ikm: <data>, info: <data>}`; the
/// answer `{okm: <data>}`, or `{error: <text>}` and the connection closed.
public enum DeriveProtocol: ServedProtocol {
    public static let name = "derive/1"
    public static let summary = "HKDF-SHA256 on the server's provider, checked on the client's"
    /// Its one op: the lab's router sends it every request whose `op` is `derive`.
    public static let requests = ServedRequests.ops(["derive"])
    /// The bytes derived.
    static let outputBytes = 32
    /// The most input a request may carry: a request is a few hundred bytes.
    static let maxInputBytes = 1024

    /// Served whenever the catalog has it: derive/1 has no settings.
    public static func handler<R: StepRecorder>(for setup: ServingSetup, recorder: inout R) throws -> (any FrameHandler)? {
        DeriveServer(provider: setup.provider)
    }

    /// A request for `ikm` and `info`.
    static func request(ikm: [UInt8], info: [UInt8]) throws -> [UInt8] {
        var request = PropertyListDictionary()
        request.set("op", string: "derive")
        request.set("ikm", data: ikm)
        request.set("info", data: info)
        return try request.encoded()
    }
}

/// derive/1's server side.
struct DeriveServer: FrameHandler {
    /// The provider it derives with.
    let provider: any CryptoProvider
    /// The server's step: one derivation.
    static let derive = Step("derive.server")

    func respond<R: StepRecorder>(to body: [UInt8], recorder: inout R) async -> FrameAnswer {
        do {
            let request = try PropertyListDictionary(decoding: body)
            let ikm = try request.data("ikm")
            let info = try request.data("info")
            guard !ikm.isEmpty, ikm.count <= DeriveProtocol.maxInputBytes, info.count <= DeriveProtocol.maxInputBytes else {
                return Self.refusal("ikm must be 1 to \(DeriveProtocol.maxInputBytes) bytes, info at most as many")
            }
            let start = Stopwatch.now()
            let okm = try self.provider.hkdfSHA256(
                inputKeyMaterial: ikm,
                salt: [],
                info: info,
                outputByteCount: DeriveProtocol.outputBytes
            )
            recorder.record(Self.derive, nanoseconds: Stopwatch.now() - start)
            var answer = PropertyListDictionary()
            answer.set("okm", data: okm)
            return FrameAnswer(body: try answer.encoded(), group: DeriveProtocol.name)
        } catch {
            return Self.refusal("\(error)")
        }
    }

    /// An error answer that closes the connection, with its reason.
    static func refusal(_ reason: String) -> FrameAnswer {
        var answer = PropertyListDictionary()
        answer.set("error", string: reason)
        return FrameAnswer(body: (try? answer.encoded()) ?? [], closeReason: "badRequest: \(reason)")
    }
}
