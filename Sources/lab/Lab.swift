import ArgumentParser
import Foundation
import LabCore
import LabResults
import NIOCore
import NIOPosix

/// `lab`: a benchmark and simulation lab for secure client/server exchanges.
@main
struct Lab: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lab",
        abstract: "A benchmark and simulation lab for secure client/server exchanges.",
        version: LabInfo.current.versionText,
        subcommands: [
            Run.self, Serve.self, Compare.self, Check.self, Merge.self, Calibrate.self, HiccupsCommand.self, Validate.self, List.self,
        ]
    )

    /// Chooses the threads Swift Concurrency's tasks run on, then runs the command.
    ///
    /// Over sockets, tasks run on NIO's event-loop threads instead of a second pool beside
    /// them: an exchange then hops between tasks and channels without a thread switch.
    /// Measured on 2 cores with 1,000 clients (Scenarios/perf/loopback-1000.json), loopback
    /// went from 65% to 82% of the in-process rate. In-process runs (nothing but tasks) keep
    /// Swift's own pool, which schedules a thousand yielding tasks faster and steadier.
    /// `LAB_EXECUTOR=swift` or `=nio` overrides the choice.
    ///
    /// A process of a counted run (`lab run --counted`, under callgrind) runs every task on one
    /// event loop. On Swift's pool, which thread ran which job, when an idle thread exited, and
    /// when a thread's libdispatch cache refilled from the heap followed the machine's timing;
    /// the heap, and with it the addresses the runtime's metadata caches hash, then differed
    /// from process to process, and so did the steps' counts (x25519 `decrypt` by up to 1.5%).
    static func main() async {
        // getenv, not ProcessInfo's dictionary: a counted run's heap holds nothing of the
        // environment (CountedRun).
        if getenv(WorkCounter.outputVariable) != nil {
            NIOSingletons.groupLoopCountSuggestion = 1
            _ = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        } else if Self.usesEventLoopsForTasks(CommandLine.arguments, getenv("LAB_EXECUTOR").map { String(cString: $0) }) {
            _ = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        }
        await Self.runReportingUsageErrors()
    }

    /// Parses and runs the command. A usage error found while parsing (an unknown option, a
    /// value outside an option's list, a missing argument) exits 1, the code the commands
    /// document for bad input or usage, instead of ArgumentParser's 64; help and every
    /// other outcome are ArgumentParser's own.
    static func runReportingUsageErrors() async {
        let command: any ParsableCommand
        do {
            command = try Self.parseAsRoot(nil)
        } catch {
            guard Self.exitCode(for: error) == .validationFailure else { Self.exit(withError: error) }
            FileHandle.standardError.write(Data((Self.fullMessage(for: error) + "\n").utf8))
            Self.exit(withError: ExitCode(1))
        }
        do {
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                var command = command
                try command.run()
            }
        } catch {
            Self.exit(withError: error)
        }
    }

    /// Whether tasks should run on NIO's event loops: for `lab serve`, and for `lab run` of a
    /// scenario whose server transport is not `in-process`.
    static func usesEventLoopsForTasks(_ arguments: [String], _ override: String?) -> Bool {
        if let override, ["swift", "nio"].contains(override) { return override == "nio" }
        guard arguments.count > 1 else { return false }
        switch arguments[1] {
        case "serve":
            return true
        case "run":
            // The scenario is read properly later; an unreadable one gets the default here.
            guard let path = arguments.dropFirst(2).first(where: { !$0.hasPrefix("-") }),
                let data = FileManager.default.contents(atPath: path),
                let scenario = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                let server = scenario["server"] as? [String: Any]
            else { return false }
            return (server["transport"] as? String ?? "in-process") != "in-process"
        default:
            return false
        }
    }
}
