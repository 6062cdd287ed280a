import ArgumentParser
import Foundation
import LabCore
public import LabKit
import LabMessaging
import LabReport
import LabResults
import LabRunner
import LabScenario
import NIOCore
import NIOPosix
import Synchronization

/// The `lab` command as a library: `lab` itself is `LabCLI.main(catalog: BuiltInPlugins.catalog)`,
/// and a package that adds plugins builds its own `lab` by handing its catalog instead
/// (docs/architecture.md, "A plugin outside the repository").
public enum LabCLI {
    /// The plugins every command reads: the catalog `main(catalog:)` was handed, bound for
    /// the parse and the run beneath it (ArgumentParser makes the commands, so a command reads
    /// it here rather than from an argument). A task-local value, not a global: nothing can
    /// change it once bound, and two catalogs can run side by side in one process.
    @TaskLocal static var catalog = PluginCatalog.empty

    /// The catalog's msg/1 kinds: what `lab serve`'s msg/1 options, `lab list` and `lab schema` offer.
    static var messagingKinds: MessagingKinds { Self.catalog.plugins.extensions[MessagingKinds.self] }

    /// Runs the command line with `catalog`'s plugins and exits.
    public static func main(catalog: PluginCatalog) async {
        await Self.$catalog.withValue(catalog) { await Lab.main() }
    }
}

/// `lab`: a benchmark and simulation lab for secure client/server exchanges.
struct Lab: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lab",
        abstract: "A benchmark and simulation lab for secure client/server exchanges.",
        version: LabInfo.current.versionText,
        subcommands: [
            Run.self, Serve.self, Compare.self, Check.self, Merge.self, Calibrate.self, HiccupsCommand.self, Validate.self,
            List.self, Schema.self,
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
            let message =
                Self.unknownCommandMessage(Array(CommandLine.arguments.dropFirst())) ?? Self.fullMessage(for: error)
            FileHandle.standardError.write(Data((MarkdownReporter.printable(message) + "\n").utf8))
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

    /// What `lab runn x.json` is told: its first word names no command, with the nearest one
    /// (the scenario validation's "did you mean") and the list; nil when the first word is a
    /// command, an option or missing, whose errors ArgumentParser words.
    static func unknownCommandMessage(_ arguments: [String]) -> String? {
        let names = Self.configuration.subcommands.map { $0._commandName } + ["help"]
        guard let word = arguments.first, !word.hasPrefix("-"), !names.contains(word) else { return nil }
        return """
            Error: '\(word)' is not a lab command\(suggestion(for: word, in: names)); the commands: \
            \(names.joined(separator: ", "))
            Usage: lab <subcommand>
              See 'lab --help' for more information.
            """
    }

    /// Whether tasks should run on NIO's event loops: for `lab serve`, and for `lab run` of a
    /// scenario whose server transport (after its `--set` changes) crosses a socket, as the
    /// catalog's transport says.
    static func usesEventLoopsForTasks(_ arguments: [String], _ override: String?) -> Bool {
        if let override, ["swift", "nio"].contains(override) { return override == "nio" }
        guard arguments.count > 1 else { return false }
        switch arguments[1] {
        case "serve":
            return true
        case "run":
            // The scenario is read properly later; an unreadable one gets the default here.
            guard let transport = Self.serverTransport(Array(arguments.dropFirst(2))) else { return false }
            return LabCLI.catalog.plugins.transports.type(named: transport)?.usesNetwork ?? false
        default:
            return false
        }
    }

    /// The `server.transport` of `lab run`'s scenario, with its `--set` changes applied.
    static func serverTransport(_ arguments: [String]) -> String? {
        var overrides: [ScenarioOverride] = []
        var file: String?
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--set", index + 1 < arguments.count {
                overrides += ScenarioOverride(argument: arguments[index + 1]).map { [$0] } ?? []
                index += 2
                continue
            }
            if argument.hasPrefix("--set=") {
                overrides += ScenarioOverride(argument: String(argument.dropFirst(6))).map { [$0] } ?? []
            } else if !argument.hasPrefix("-"), file == nil {
                file = argument
            }
            index += 1
        }
        guard let file, let data = try? InputFile.read(file),
            let changed = try? ScenarioOverride.apply(overrides, to: data),
            let scenario = try? JSONDecoder().decode(TransportOnly.self, from: changed)
        else { return nil }
        return scenario.server?.transport ?? "in-process"
    }

    /// The one field `serverTransport` reads.
    private struct TransportOnly: Decodable {
        struct Server: Decodable { var transport: String? }
        var server: Server?
    }
}
