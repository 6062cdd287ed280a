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

/// Runs a command body, printing a `LabError` on stderr and exiting with its code. `failed`
/// hears of any error first, in one line (the message printed, its cause in brackets) with
/// the exit code the command gives (`lab run --shard` records both in shard.json).
func reportingErrors(
    failed: (_ reason: String, _ code: Int32) -> Void = { _, _ in },
    _ body: () async throws -> Void
) async throws {
    do {
        try await body()
    } catch {
        guard let (message, cause, code) = describe(error) else {
            // ArgumentParser's own (an `ExitCode`, a usage error) it prints and exits with itself.
            let code = (error as? ExitCode)?.rawValue ?? 1
            failed(error is ExitCode ? "exit code \(code)" : "\(error)", code)
            throw error
        }
        var standardError = StandardError()
        print("error: \(message)", to: &standardError)
        if let cause { print("  cause: \(cause)", to: &standardError) }
        failed(message + (cause.map { " (cause: \($0))" } ?? ""), code.rawValue)
        throw code
    }
}

/// What `reportingErrors` prints of `error` (its message, and its cause if any) and the exit
/// code it gives; nil for an error it lets through.
private func describe(_ error: any Error) -> (message: String, cause: String?, code: ExitCode)? {
    switch error {
    case let error as LabError:
        (error.message, error.cause.map(plainCause), error.code.exitCode)
    case let error as CocoaError:
        // A file error no LabError wrapped: one sentence, the path and the reason.
        ("\(error.filePath.map { $0 + ": " } ?? "")\(FileReason.describe(error))", nil, ExitCode(3))
    case let error as any CodedError:
        // A protocol's verdict (CXVerdict, MsgVerdict) outside a run's iterations: the run failed.
        (error.description, nil, ExitCode(3))
    case let error as ValidationError:
        // Bad options found while running: exit 1, as the README gives bad input or usage.
        (error.message, nil, ExitCode(1))
    default:
        nil
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
