public import LabCore

/// cx/1 as a served protocol: the exchange of docs/protocol.md §2, answered by a `CXServer`
/// over the server's suites. Its requests carry no `op`, so it takes every request no other
/// protocol claims (the legacy bare key included).
public enum CXProtocol: ServedProtocol {
    public static let name = "cx/1"
    public static let summary = "the CryptoExercise exchange: a public key in, a wrapped key and a signed text out"
    public static let requests = ServedRequests.rest

    /// A cx/1 server offering `setup.suites` on its provider; per-run signing keys are made
    /// here (`keygen.server`).
    public static func handler<R: StepRecorder>(for setup: ServingSetup, recorder: inout R) throws -> (any FrameHandler)? {
        try CXFlow.serverHandler(
            provider: setup.provider,
            suites: setup.suites,
            keyLifetime: setup.keys,
            others: setup.providers,
            knownSuites: setup.knownSuites,
            recorder: &recorder
        )
    }
}
