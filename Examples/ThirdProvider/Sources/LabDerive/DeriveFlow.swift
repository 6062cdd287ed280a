import LabKit

/// The `derive` flow: each iteration asks the server for HKDF-SHA256 of fresh key material
/// (derive/1) and derives the same on the client's provider; a difference fails the
/// iteration. Run in process, the flow serves itself; against `lab serve`, the server this
/// package's `lab` runs serves derive/1 beside cx/1 and msg/1 (`DeriveProtocol`).
public struct DeriveFlow: Flow {
    public struct Options: Decodable, Sendable {
        /// The context each derivation is bound to.
        var info: String

        public init(from decoder: any Decoder) throws {
            let object = ScenarioObject(decoder, keys: ["info"])
            self.info = object.optional("info", expected: "a text") ?? "lab derive"
        }
    }

    public static let name = "derive"
    public static let summary = "HKDF-SHA256 on the server's provider (derive/1), checked on the client's"
    /// The client's own derivation.
    static let check = Step("derive.check")
    public static let steps = [Step.exchange, check]
    public static let outcomes: [String]? = ["agreed"]
    public static let usesSuite = false
    public let suite = "-"
    public let isInsecure = false
    public let handler: (any FrameHandler)?
    let provider: any CryptoProvider
    let info: [UInt8]

    public static func check(_ setup: FlowSetup, options: Options) -> [(path: String, message: String)] { [] }

    public init<R: StepRecorder>(setup: FlowSetup, options: Options, recorder: inout R) throws {
        self.provider = setup.clientProvider
        self.info = Array(options.info.utf8)
        self.handler = setup.startsServer ? DeriveServer(provider: setup.serverProvider) : nil
    }

    public func makeClient<R: StepRecorder>(recorder: inout R) throws -> any FlowClient {
        Client(provider: self.provider, info: self.info)
    }

    struct Client: FlowClient {
        let provider: any CryptoProvider
        let info: [UInt8]

        mutating func iterate<R: StepRecorder>(over connection: any Connection, recorder: inout R) async throws {
            let ikm = try self.provider.randomBytes(count: 32)
            let body = try DeriveProtocol.request(ikm: ikm, info: self.info)
            let answer = try PropertyListDictionary(decoding: try await connection.request(body, step: .exchange, recorder: &recorder))
            if let error = try answer.optionalString("error") {
                throw LabError(.malformedMessage, "the derive/1 server refused: \(error)")
            }
            let start = Stopwatch.now()
            let expected = try self.provider.hkdfSHA256(
                inputKeyMaterial: ikm,
                salt: [],
                info: self.info,
                outputByteCount: DeriveProtocol.outputBytes
            )
            recorder.record(DeriveFlow.check, nanoseconds: Stopwatch.now() - start)
            guard try answer.data("okm") == expected else {
                throw LabError(.malformedMessage, "the server's HKDF-SHA256 differs from the client's provider's")
            }
            recorder.count("agreed", by: 1)
        }
    }
}
