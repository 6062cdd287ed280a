import Foundation
import LabCore

/// The parsers that read untrusted bytes, each as a fuzz target: the frame decoder, the cx/1
/// server and reply decoder, the msg/1 server and the scenario parser (issue 8, README
/// "Fuzzing").
///
/// A target feeds one input to the code under test and checks properties that must hold for
/// every input: the code's own errors (a bad length, a malformed plist) are expected answers,
/// never failures; a broken property throws `FuzzFailure`, and a crash is a crash. The fuzzer
/// executables in `Fuzz/` call `fuzz(_:)`; `FuzzCorpusTests` replays the committed corpus and
/// every past finding through `run(_:)`.
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

    /// Runs one input as libFuzzer hands it over, and stops the process with the broken
    /// property when one does not hold (libFuzzer then saves the input).
    public func fuzz(_ data: UnsafePointer<UInt8>?, _ count: Int) {
        let input = data.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
        do {
            switch self {
            // Synchronous targets run on libFuzzer's thread: no task, no allocation that
            // outlives the input (libFuzzer takes one for a leak and runs LeakSanitizer).
            case .frame: try FrameTarget.run(input)
            case .cx: try CXTarget.run(input)
            case .scenario: try ScenarioTarget.run(input)
            case .msg: try MsgTarget.runBlocking(input)
            }
        } catch {
            fatalError("fuzz target '\(self.rawValue)': \(error)")
        }
    }
}

/// A property of a fuzz target that an input broke.
public struct FuzzFailure: Error, CustomStringConvertible, Sendable {
    /// What should have held, and what happened instead.
    public var message: String

    init(_ message: String) {
        self.message = message
    }

    public var description: String { self.message }
}

/// Checks a property.
func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws {
    if !condition { throw FuzzFailure(message()) }
}
