import LabFuzzCX
import LabFuzzFrame
import LabFuzzMsg
import LabFuzzScenario

/// The parsers that read untrusted bytes, each as a fuzz target: the frame decoder, the cx/1
/// server and reply decoder, the msg/1 server and the scenario parser (issue 8, docs/hardening.md,
/// "Fuzzing").
///
/// A target feeds one input to the code under test and checks properties that must hold for
/// every input: the code's own errors (a bad length, a malformed plist) are expected answers,
/// never failures; a broken property throws `FuzzFailure` (LabFuzzSupport), and a crash is a
/// crash. Each target is a module of its own (LabFuzzFrame, LabFuzzCX, LabFuzzMsg,
/// LabFuzzScenario), whose `fuzz(_:_:)` its fuzzer in `Fuzz/` calls; `FuzzCorpusTests` replays
/// the committed corpus and every past finding through `run(_:)`.
public enum FuzzTarget: String, CaseIterable, Sendable {
    /// `FrameParser` (LabWire) against the server's NIO `FrameDecoder`, chunked as the input says.
    case frame
    /// The cx/1 server's answer to a request body, or the client's decoding of a reply.
    case cx
    /// The msg/1 server (with a SQLite store in a temporary folder) answering a request body.
    case msg
    /// `lab validate`'s parser: JSON scenario text to a plan, or problems that name a JSON path.
    case scenario

    /// Runs one input; throws `FuzzFailure` when a property does not hold.
    public func run(_ input: [UInt8]) async throws {
        switch self {
        case .frame: try FrameTarget.run(input)
        case .cx: try CXTarget.run(input)
        case .msg: try await MsgTarget.run(input)
        case .scenario: try ScenarioTarget.run(input)
        }
    }
}
