import ArgumentParser
import Foundation
import LabCore
import LabReport

extension LabError.Code {
    /// The exit code the README's command table gives this kind of failure: 1 bad input or usage, 3 the run failed.
    var exitCode: ExitCode {
        switch self {
        case .invalidScenario, .unknownPlugin, .unknownSuite, .unsupported, .unreadableFile: ExitCode(1)
        default: ExitCode(3)
        }
    }
}

/// Runs a command body, printing a `LabError` on stderr and exiting with its code.
func reportingErrors(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let error as LabError {
        var standardError = StandardError()
        print("error: \(error.message)", to: &standardError)
        if let cause = error.cause {
            print("  cause: \(plainCause(cause))", to: &standardError)
        }
        throw error.code.exitCode
    } catch let error as CocoaError {
        // A file error no LabError wrapped: one sentence, the path and the reason.
        var standardError = StandardError()
        print("error: \(error.filePath.map { $0 + ": " } ?? "")\(FileReason.describe(error))", to: &standardError)
        throw ExitCode(3)
    } catch let error as any CodedError {
        // A protocol's verdict (CXVerdict, MsgVerdict) outside a run's iterations: the run failed.
        var standardError = StandardError()
        print("error: \(error.description)", to: &standardError)
        throw ExitCode(3)
    } catch let error as ValidationError {
        // Bad options found while running: exit 1, as the README gives bad input or usage.
        var standardError = StandardError()
        print("error: \(error.message)", to: &standardError)
        throw ExitCode(1)
    }
}

/// A cause as one line: a file error as its reason ("permission denied"), never Foundation's
/// domain, code and user-info dump; any other error as it describes itself.
private func plainCause(_ cause: any Error) -> String {
    let domain = (cause as NSError).domain
    return domain == NSCocoaErrorDomain || domain == NSPOSIXErrorDomain ? FileReason.describe(cause) : "\(cause)"
}

/// Standard error for `print(_:to:)`: whatever is printed through it shows its controls
/// (`MarkdownReporter.printable`), for a message can quote a server or a results.json.
struct StandardError: TextOutputStream {
    mutating func write(_ string: String) {
        FileHandleOutput.standardError(MarkdownReporter.printable(string))
    }
}
