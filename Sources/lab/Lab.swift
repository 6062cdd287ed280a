import ArgumentParser

/// `lab`: a benchmark and simulation lab for secure client/server exchanges.
@main
struct Lab: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lab",
        abstract: "A benchmark and simulation lab for secure client/server exchanges.",
        subcommands: [
            Run.self, Serve.self, Compare.self, Check.self, Merge.self, Calibrate.self, Validate.self, List.self,
        ]
    )
}
