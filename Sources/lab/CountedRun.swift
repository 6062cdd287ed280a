import ArgumentParser
import Foundation
import LabCore

/// `lab run --counted`: runs the same command again under `valgrind --tool=callgrind`, where
/// every step also reports the instructions it executed and the allocations it made
/// (`WorkCounter`): counts that do not move with the machine's load, for `lab check`'s
/// counted gate.
///
/// What the child is given, so that two runs of the same binary count the same:
/// - a copy of this executable with its debug information stripped (Valgrind 3.19 cannot
///   read the toolchain's DWARF 5, and gives up on the whole binary);
/// - `SWIFT_DETERMINISTIC_HASHING=1`, so that dictionaries and sets hash, and iterate, alike
///   in every run;
/// - callgrind's instrumentation off until the run's set-up starts (`--instr-atstart=no`).
enum CountedRun {
    /// The environment variable that carries Valgrind's version to the child's reports.
    static let versionVariable = "LAB_VALGRIND_VERSION"

    /// Runs `arguments` (this command line, `--counted` included) under callgrind and returns
    /// the child's exit code.
    static func run(arguments: [String]) throws -> Int32 {
        guard let valgrind = Self.find("valgrind") else {
            throw LabError(.unsupported, "--counted runs the lab under Valgrind, which is not installed (apt-get install valgrind)")
        }
        guard let objcopy = Self.find("objcopy") else {
            throw LabError(.unsupported, "--counted needs objcopy (binutils) to strip the debug information Valgrind cannot read")
        }
        let files = FileManager.default
        // A name of fixed length: the paths below reach the child's stack (its arguments and
        // environment), and a stack shifted by a few bytes moves the alignment of its buffers,
        // and with it the instructions `memcpy` takes.
        let scratch = files.temporaryDirectory.appendingPathComponent("lab-counted-\(UUID().uuidString)")
        try files.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? files.removeItem(at: scratch) }

        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        let stripped = scratch.appendingPathComponent("lab")
        let strip = try Self.launch(objcopy, ["--strip-debug", executable.path, stripped.path])
        guard strip == 0 else {
            throw LabError(.unsupported, "objcopy --strip-debug \(executable.path) failed (exit \(strip))")
        }
        let version = (try? Self.output(valgrind, ["--version"]))?.trimmingCharacters(in: .whitespacesAndNewlines)

        var environment = ProcessInfo.processInfo.environment
        let output = scratch.appendingPathComponent("callgrind.out").path
        environment[WorkCounter.outputVariable] = output
        environment[Self.versionVariable] = version ?? "valgrind"
        environment["SWIFT_DETERMINISTIC_HASHING"] = "1"
        return try Self.launch(
            valgrind,
            [
                "--tool=callgrind", "--quiet", "--instr-atstart=no", "--callgrind-out-file=\(output)",
                "--dump-line=yes", "--dump-instr=no", "--compress-strings=no", "--compress-pos=no",
                stripped.path,
            ] + arguments,
            environment: environment
        )
    }

    /// `name`'s path on `PATH`, if it is there.
    static func find(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Runs `path` with `arguments`, its output and errors the lab's own; its exit code
    /// (128 + the signal if one ended it).
    static func launch(_ path: String, _ arguments: [String], environment: [String: String]? = nil) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        if let environment { process.environment = environment }
        try process.run()
        process.waitUntilExit()
        return process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
    }

    /// What `path` prints.
    static func output(_ path: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}
