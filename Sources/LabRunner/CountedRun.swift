import Foundation
import LabCore
package import LabResults

/// `lab run --counted`: runs the same command again under `valgrind --tool=callgrind`, where
/// every step also reports the instructions it executed and the allocations it made
/// (`WorkCounter`): counts that do not move with the machine's load, for `lab check`'s
/// counted gate.
///
/// Each flow of the scenario is counted alone, in a process of its own, and this process
/// combines their results (`CountedFlows`) and writes the reports. What each process is
/// given, so that two runs of the same binary count the same:
/// - a copy of this executable with its debug information stripped (Valgrind 3.19 cannot
///   read the toolchain's DWARF 5, and gives up on the whole binary);
/// - `SWIFT_DETERMINISTIC_HASHING=1`, so that dictionaries and sets hash, and iterate, alike
///   in every run;
/// - the same command line, working folder and environment in every run, whatever the
///   caller's: `lab run <scratch>/scenario.json --counted --quiet` (a copy of the scenario;
///   the results go to a folder the child is told), the scratch folder as its working
///   folder, and only the variables it needs, `PATH` a constant. Strings of other lengths
///   on the heap move the runtime's address-keyed caches: two processes whose `--out`
///   paths differed in length counted rsa-modern `decode` 0.78% apart (CI, 2026-11-24);
/// - those strings padded to a multiple of 4 KiB (`StackPadding`), so that its stack lies
///   alike in every run;
/// - callgrind's instrumentation off until the run's set-up starts (`--instr-atstart=no`).
/// In the process, every task runs on one event loop (`Lab.main`), and the step histograms
/// are sized for any time from the start (`StepDetail.histogram()`).
package enum CountedRun {
    /// A counted process that failed, with its exit code (the command exits with it: the
    /// child has printed why).
    package struct ChildFailed: Error {
        /// The process's exit code.
        package var code: Int32
    }

    /// The environment variable that carries Valgrind's version to the child's reports.
    package static let versionVariable = "LAB_VALGRIND_VERSION"

    /// What a process under callgrind is to run, from its environment: which flow, and the
    /// folder its results go to.
    package struct Child {
        static let flowVariable = "LAB_COUNTED_FLOW"
        static let directoryVariable = "LAB_COUNTED_OUT"
        static let layoutVariable = "LAB_COUNTED_LAYOUT"

        package var flow: Int
        package var directory: String
        /// How far this process shifts its heap before the run (`HeapShift`), in its units.
        package var layout: Int

        /// This process's part, or nil if no counted run started it.
        package static var current: Child? {
            // getenv, not ProcessInfo's dictionary: nothing of the environment on the heap.
            guard let flow = getenv(Self.flowVariable).flatMap({ Int(String(cString: $0)) }),
                let directory = getenv(Self.directoryVariable).map({ String(cString: $0) })
            else { return nil }
            let layout = getenv(Self.layoutVariable).flatMap { Int(String(cString: $0)) } ?? 0
            return Child(flow: flow, directory: directory, layout: layout)
        }
    }

    /// Runs `arguments` (this command line, `--counted` included) under callgrind, once for
    /// each of the scenario's `flows` flows alone (`Plan.countedAlone(flow:)`), as many at a
    /// time as there are cores, and returns their results in the flows' order. Throws
    /// `ChildFailed` with the first failed process's code.
    package static func run(scenario: String, slowdowns: [String], flows: Int, layout: Int = 0) throws -> [RunResult] {
        guard let valgrind = Self.find("valgrind") else {
            throw LabError(.unsupported, "--counted runs the lab under Valgrind, which is not installed (apt-get install valgrind)")
        }
        guard let objcopy = Self.find("objcopy") else {
            throw LabError(.unsupported, "--counted needs objcopy (binutils) to strip the debug information Valgrind cannot read")
        }
        let files = FileManager.default
        // Names of fixed length: the paths below reach the children's arguments and
        // environment, and so their stacks and heaps. /tmp, not TMPDIR: the same folder on
        // every machine.
        let scratch = URL(fileURLWithPath: "/tmp").appendingPathComponent("lab-counted-\(UUID().uuidString)")
        try files.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? files.removeItem(at: scratch) }

        let (arguments, stripped) = try Self.prepare(scratch, scenario: scenario, slowdowns: slowdowns, objcopy: objcopy)
        let version = (try? Self.output(valgrind, ["--version"]))?.trimmingCharacters(in: .whitespacesAndNewlines)
        func child(_ flow: Int) throws -> (process: Process, results: URL) {
            try Self.startChild(
                flow: flow,
                valgrind: (valgrind, version ?? "valgrind"),
                lab: stripped,
                arguments: arguments,
                scratch: scratch,
                layout: layout
            )
        }

        // Each process counts alike whatever runs beside it: as many at once as there are cores.
        let width = max(1, ProcessInfo.processInfo.activeProcessorCount)
        var results: [RunResult] = []
        for batch in stride(from: 0, to: flows, by: width) {
            let started = try (batch..<min(flows, batch + width)).map(child)
            let codes = started.map { started -> Int32 in
                started.process.waitUntilExit()
                return Self.code(started.process)
            }
            if let failed = codes.first(where: { $0 != 0 }) { throw ChildFailed(code: failed) }
            results += try started.map { try RunResult.read(from: $0.results) }
        }
        return results
    }

    /// The children's command line (`run` of a copy of the scenario in `scratch`, counted,
    /// with the slowdowns) and the lab they run: this executable with its debug information
    /// stripped (Valgrind 3.19 cannot read DWARF 5).
    static func prepare(
        _ scratch: URL,
        scenario: String,
        slowdowns: [String],
        objcopy: String
    ) throws -> (arguments: [String], lab: URL) {
        let scenarioCopy = scratch.appendingPathComponent("scenario.json")
        do {
            try Data(contentsOf: URL(fileURLWithPath: scenario)).write(to: scenarioCopy)
        } catch {
            throw LabError(
                .invalidScenario,
                "Cannot copy the scenario '\(scenario)' for --counted: \(FileReason.describe(error))"
            )
        }
        let arguments = ["run", scenarioCopy.path, "--counted", "--quiet"] + slowdowns.flatMap { ["--test-slowdown", $0] }
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        let stripped = scratch.appendingPathComponent("lab")
        let strip = try Self.launch(objcopy, ["--strip-debug", executable.path, stripped.path])
        guard strip == 0 else {
            throw LabError(.unsupported, "objcopy --strip-debug \(executable.path) failed (exit \(strip))")
        }
        return (arguments, stripped)
    }

    /// Starts the child that counts flow `flow` alone under callgrind, in `scratch`, with an
    /// environment of its own (no variable of the caller's but `PATH`, a constant); returns
    /// the process and where its results will be.
    static func startChild(
        flow: Int,
        valgrind: (path: String, version: String),
        lab: URL,
        arguments: [String],
        scratch: URL,
        layout: Int
    ) throws -> (process: Process, results: URL) {
        let name = String(format: "%03d", flow)
        let output = scratch.appendingPathComponent("callgrind-\(name).out").path
        let results = scratch.appendingPathComponent("flow-\(name)")
        var environment = ["PATH": "/usr/local/bin:/usr/bin:/bin", "TMPDIR": scratch.path]
        environment[WorkCounter.outputVariable] = output
        environment[Self.versionVariable] = valgrind.version
        environment[Child.flowVariable] = name
        environment[Child.directoryVariable] = results.path
        environment[Child.layoutVariable] = String(layout)
        environment["SWIFT_DETERMINISTIC_HASHING"] = "1"
        #if LAB_GATE_PROBE
        if let probe = getenv(GateProbe.variable) { environment[GateProbe.variable] = String(cString: probe) }
        #endif
        environment = StackPadding.padded(
            environment,
            arguments: [lab.path] + arguments,
            offset: HeapShift.stackOffset(layout)
        )
        let process = try Self.start(
            valgrind.path,
            [
                "--tool=callgrind", "--quiet", "--instr-atstart=no", "--callgrind-out-file=\(output)",
                "--dump-line=yes", "--dump-instr=no", "--compress-strings=no", "--compress-pos=no",
                lab.path,
            ] + arguments,
            environment: environment,
            in: scratch
        )
        return (process, results.appendingPathComponent("results.json"))
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
        let process = try Self.start(path, arguments, environment: environment)
        process.waitUntilExit()
        return Self.code(process)
    }

    /// Starts `path` with `arguments`, its output and errors the lab's own.
    static func start(
        _ path: String,
        _ arguments: [String],
        environment: [String: String]? = nil,
        in directory: URL? = nil
    ) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        if let environment { process.environment = environment }
        if let directory { process.currentDirectoryURL = directory }
        try process.run()
        return process
    }

    /// An ended process's exit code, 128 + the signal if one ended it.
    static func code(_ process: Process) -> Int32 {
        process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
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

/// Shifts a counted process's heap before its run (`lab run --counted --layout N`; its
/// stack moves too, by `stackOffset(N)`, through `StackPadding`'s offset).
///
/// Where a step's buffers fall moves its count without any change to its code: `memcpy` and
/// the vector code of AES-GCM take other paths for other alignments. One build counts alike
/// in most runs, but another build (other frame sizes on the stack, other allocations on the
/// heap) or the order the runtime's threads happen to allocate in puts the buffers elsewhere.
/// A baseline recorded over several layouts carries that in each step's spread between
/// processes, so `lab check` allows a step what its buffers' placement alone can move it.
package enum HeapShift {
    /// Bytes per unit of `--layout`: glibc's allocation granule.
    static let unit = 16
    nonisolated(unsafe) private static var held: UnsafeMutableRawPointer?

    /// How far `layout` moves the stack: 16 · (5 · layout mod 256) bytes, so that layouts
    /// 0–15 pair each of 16 heap offsets with a different one of 16 stack offsets, not the
    /// same one.
    static func stackOffset(_ layout: Int) -> Int {
        (layout % 256 * 5 % 256) * Self.unit
    }

    /// Takes `layout × unit` bytes from the heap, for the process's lifetime.
    package static func apply(_ layout: Int) {
        guard layout > 0, self.held == nil else { return }
        self.held = malloc(layout * Self.unit)
    }
}
