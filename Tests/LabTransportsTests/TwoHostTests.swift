import Foundation
import LabTestSupport
import Synchronization
import Testing

/// The `two-host` tool (`Sources/TwoHost`, with `scripts/two-host-net.sh`): two network
/// namespaces joined by a veth pair, each with its own D-Bus system bus and avahi-daemon; host
/// B finds host A's `lab serve` by DNS-SD, then the same load runs on one host over loopback
/// and `lab compare` compares the two runs. Each test checks the run leaves nothing behind: no
/// namespace, no process of the run, no extra mount, no temp dir, and the machine's own
/// avahi-daemon and dbus-daemon untouched.
///
/// Runs as root (CI does): the run creates namespaces and mounts tmpfs. Serialized: each run
/// counts the machine's mounts before and after, which another run in between would change.
@Suite(.tier(.load), .serialized, .timeLimit(.minutes(3)))
struct TwoHostTests {
    /// The tool, built beside `lab`.
    static let tool = LabProcess.executable.deletingLastPathComponent().appendingPathComponent("two-host")
    /// The folder of its scenarios.
    static let scenarios = RepositoryPaths.root.appendingPathComponent("Scenarios/two-host")

    @Test(
        "two-host: B discovers A across the veth by DNS-SD with zero errors, compares with the baseline, leaves nothing"
    )
    func runsDiscoversComparesAndCleansUp() async throws {
        let before = try await HostState.now()
        let out = try Self.temporaryFolder("lab-two-host-out")
        defer { try? FileManager.default.removeItem(at: out) }

        let tool = try Self.launch(out: out)
        defer { tool.terminate() }
        let (trace, status) = try await Self.traced(tool)
        #expect(trace.processes.count >= 6, "two anchors, two dbus-daemons, two avahi-daemons: \(trace.processes)")
        #expect(status == 0, "stdout:\n\(tool.output)\nstderr:\n\(tool.errors)")

        // The two-host run: discovery timed once per flow group, every exchange clean.
        let twoHost = try Self.json(out.appendingPathComponent("two-host/results.json"))
        #expect(twoHost["errors"] as? Int == 0)
        #expect(twoHost["completedIterations"] as? Int == 200, "4 clients × 50 iterations")
        let steps = Self.steps(twoHost)
        #expect(steps["discover"] == 1, "one discover step per flow group: \(steps)")
        #expect(steps["connect"] == 4, "one connect per client: \(steps)")
        let transport = (twoHost["metadata"] as? [String: Any])?["transport"] as? String ?? ""
        #expect(transport.contains("lab-a"), "the transport names the instance found: \(transport)")

        // The baseline: same load, static address, no discovery.
        let singleHost = try Self.json(out.appendingPathComponent("single-host/results.json"))
        #expect(singleHost["errors"] as? Int == 0)
        #expect(singleHost["completedIterations"] as? Int == 200)
        #expect(Self.steps(singleHost)["discover"] == nil)

        // Both sides in the two-host report: host A's own steps, fetched over the wire
        // (serverStats), one signature per exchange it answered, warm-up ones included.
        for run in [twoHost, singleHost] {
            let groups = run["groups"] as? [[String: Any]] ?? []
            var signed = 0
            for suite in ["x25519", "rsa-modern"] {
                func group(_ flow: (String) -> Bool) -> [String: Any]? {
                    groups.first {
                        let key = $0["key"] as? [String: Any]
                        return flow(key?["flow"] as? String ?? "") && key?["suite"] as? String == suite
                    }
                }
                let client = group { $0 != "server" }?["iterations"] as? Int ?? -1
                let steps = group { $0 == "server" }?["steps"] as? [[String: Any]]
                let sign = (steps?.first { $0["step"] as? String == "sign" }?["statistics"] as? [String: Any])?["count"]
                let count = sign as? Int ?? 0
                #expect(count >= client && client > 0, "server \(suite) signed \(count) for \(client) exchanges")
                signed += count
            }
            let exchanges = (run["completedIterations"] as? Int ?? 0) + (run["warmupIterations"] as? Int ?? 0)
            #expect(signed == exchanges, "the server signed once per exchange of the run")
        }

        // The servers' own reports (written on SIGTERM) and the comparison.
        for report in [
            "server-a/results.json", "server-single-host/results.json", "comparison/comparison.md",
            "comparison/comparison.csv",
        ] {
            #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent(report).path), "\(report)")
        }
        #expect(!tool.errors.contains("skipping the comparison"), "lab compare ran: \(tool.errors)")
        #expect(trace.logsWereDeleted(), "without --keep-logs, the logs go with the temp dir")

        try await trace.expectNothingLeftBehind(comparedWith: before)
    }

    /// How the tool may find SIGPIPE: default (a user's shell), or ignored by whoever started
    /// it (a test process that has run NIO code passes it on ignored). Either way its next
    /// write fails, and it tears down and exits 128 + 13, as a shell reports SIGPIPE.
    static let pipeDispositions: [(env: String, status: String)] = [
        ("--default-signal=PIPE", "141"), ("--ignore-signal=PIPE", "141"),
    ]

    @Test(
        "two-host whose reader goes away (stdout and stderr in one pipe to `head`) still tears down",
        arguments: pipeDispositions.map(\.env)
    )
    func closedPipeCleansUp(_ disposition: String) async throws {
        let expectedStatus = try #require(Self.pipeDispositions.first { $0.env == disposition }?.status)
        let out = try Self.temporaryFolder("lab-two-host-pipe")
        defer { try? FileManager.default.removeItem(at: out) }
        // The 4th line comes once the link is up; head then exits, and the tool's next write
        // fails, while its stderr is that same closed pipe (this once killed the bash version
        // untidily). Into a file, so that nothing the run leaves behind holds this test's pipes.
        let heard = out.appendingPathComponent("head.txt")
        let toolStatus = out.appendingPathComponent("status.txt")
        // The tool's own exit status (not head's, which a pipeline reports) goes to a file.
        let command =
            "exec </dev/null >/dev/null 2>&1; env \(disposition) \(Self.quoted(Self.tool.path))"
            + " --lab \(Self.quoted(LabProcess.executable.path))"
            + " --out \(Self.quoted(out.path + "/reports")) 2>&1 | head -n 4 > \(Self.quoted(heard.path));"
            + " echo \"${PIPESTATUS[0]}\" > \(Self.quoted(toolStatus.path))"
        let outcome = try await ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/timeout"),
            ["120", "/bin/bash", "-c", command]
        )
        #expect(outcome.status == 0, "the pipeline ended within 120 s")
        let status = try String(contentsOf: toolStatus, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(status == expectedStatus, "two-host's exit status once its reader went away (\(disposition))")
        let lines = try String(contentsOf: heard, encoding: .utf8).split(separator: "\n").map(String.init)
        let namespaces = lines.first { $0.hasPrefix("two-host: namespaces ") }?.split(separator: " ").dropFirst(2).map(
            String.init
        )
        let work = lines.first { $0.hasPrefix("two-host: work dir ") }.map {
            String($0.dropFirst("two-host: work dir ".count))
        }
        #expect(namespaces?.count == 2, "\(lines)")
        let listed = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"), ["ip", "netns", "list"])
        for name in namespaces ?? [] {
            #expect(!listed.output.contains(name), "namespace \(name) left behind")
            let anchors = try await ChildProcess.run(
                URL(fileURLWithPath: "/usr/bin/env"),
                ["pgrep", "-f", "two-host-net.sh host lab-[ab] veth-[ab]-\(name.split(separator: "-").last ?? "")"]
            )
            #expect(anchors.output.isEmpty, "host processes left behind: \(anchors.output)")
        }
        if let work { #expect(!FileManager.default.fileExists(atPath: work), "work dir \(work) left behind") }
    }

    /// `text` in single quotes for bash.
    static func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    @Test("two-host interrupted with SIGINT while host B runs: exit 130, and nothing is left behind")
    func interruptedRunCleansUp() async throws {
        let before = try await HostState.now()
        let out = try Self.temporaryFolder("lab-two-host-int")
        defer { try? FileManager.default.removeItem(at: out) }

        // In the middle: both hosts up, server A advertised, host B's lab run just started.
        let tool = try await Self.interrupt([], at: "two-host: running two-host.json on host B", before: before, out: out)
        #expect(tool.errors.contains("interrupted by SIGINT"))
    }

    @Test("A delayed sweep interrupted with SIGINT in its TLS runs: exit 130, and nothing is left behind, link-delay included")
    func interruptedSweepCleansUp() async throws {
        let before = try await HostState.now()
        let out = try Self.temporaryFolder("lab-two-host-sweep-int")
        defer { try? FileManager.default.removeItem(at: out) }
        // The first point's TLS part: lab serve --tls on A, host B's first group running, a
        // holder on each end of the link where the kernel has no netem.
        let tool = try await Self.interrupt(
            ["--sweep-loss", "0%,20%", "--delay", "2ms"],
            at: "two-host: running sweep-tls.json on host B",
            point: "loss-0%",
            before: before,
            out: out
        )
        #expect(tool.errors.contains("interrupted by SIGINT"))
        #expect(!FileManager.default.fileExists(atPath: out.appendingPathComponent("sweep.md").path), "no sweep written")
        let holders = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/pgrep"), ["-af", "link-delay --queue"])
        #expect(holders.output.isEmpty, "no link-delay left: \(holders.output)")
    }

    @Test("single-host.json is two-host.json with a static address instead of discovery: the same load")
    func scenariosDifferOnlyInTheServer() throws {
        let folder = Self.scenarios
        var twoHost = try Self.json(folder.appendingPathComponent("two-host.json"))
        var singleHost = try Self.json(folder.appendingPathComponent("single-host.json"))
        #expect((twoHost["server"] as? [String: Any])?["discover"] as? String == "_crypttest._tcp")
        #expect((singleHost["server"] as? [String: Any])?["address"] as? String == "127.0.0.1:7411")
        for key in ["name", "description", "server"] {
            twoHost[key] = nil
            singleHost[key] = nil
        }
        #expect(NSDictionary(dictionary: twoHost).isEqual(to: singleHost), "clients, load, flows, thresholds, report")
    }

    // MARK: - Helpers

    /// Runs the tool with `arguments` (directly, no timeout(1) in between, so that SIGINT
    /// reaches it), interrupts it once it printed a line starting with `line`, and checks it
    /// exits 130, tears down, and leaves nothing behind that was not there `before`.
    static func interrupt(
        _ arguments: [String],
        at line: String,
        point: String? = nil,
        before: HostState,
        out: URL
    ) async throws -> ServerProcess {
        let tool = try ServerProcess(Self.tool, ["--lab", LabProcess.executable.path, "--out", out.path] + arguments)
        defer { tool.terminate() }
        let trace = try await Self.stoppingOnFailure(tool) {
            let trace = try await RunTrace.start(tool, point: point)
            _ = try await tool.line(startingWith: line, timeout: .seconds(90))
            trace.recordProcesses()
            return trace
        }
        #expect(trace.processes.count >= 7, "anchors, daemons, lab serve, lab run: \(trace.processes)")
        let status = try await tool.stop(signal: SIGINT, timeout: .seconds(40))
        #expect(status == 130, "stdout:\n\(tool.output)\nstderr:\n\(tool.errors)")
        #expect(tool.lines.contains { $0.hasPrefix("two-host: torn down in ") })
        try await trace.expectNothingLeftBehind(comparedWith: before)
        return tool
    }

    /// Runs `body`; if it throws (a line never came, a wait timed out), stops the tool with
    /// SIGTERM, on which it tears everything down, rather than leaving it to `terminate()`'s
    /// SIGKILL, which would leave the namespaces and daemons behind.
    /// The tool writing to `out` with `arguments`, bounded by timeout(1) (on expiry it sends
    /// SIGTERM, which the tool handles).
    static func launch(out: URL, _ arguments: [String] = []) throws -> ServerProcess {
        try ServerProcess(
            URL(fileURLWithPath: "/usr/bin/timeout"),
            ["--kill-after=15", "150", Self.tool.path, "--lab", LabProcess.executable.path, "--out", out.path]
                + arguments
        )
    }

    /// Waits for `tool`'s run to end, having noted its namespaces and, once host A serves,
    /// the processes in them; returns those and its exit status.
    static func traced(_ tool: ServerProcess) async throws -> (RunTrace, Int32) {
        try await Self.stoppingOnFailure(tool) {
            let trace = try await RunTrace.start(tool)
            _ = try await tool.line(startingWith: "two-host: server A listening on ", timeout: .seconds(60))
            trace.recordProcesses()
            // Signal 0 sends nothing (kill(2)'s existence check): this only waits for the exit.
            return (trace, try await tool.stop(signal: 0, timeout: .seconds(170)))
        }
    }

    static func stoppingOnFailure<T>(_ tool: ServerProcess, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch {
            _ = try? await tool.stop(signal: SIGTERM, timeout: .seconds(40))
            throw error
        }
    }

    static func temporaryFolder(_ prefix: String) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    static func json(_ url: URL) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: url))
        return try #require(object as? [String: Any], "\(url.path) is not a JSON object")
    }

    /// Step name → sample count in a results.json, the largest over its flow groups (discover is
    /// timed once per run and shown in every group).
    static func steps(_ results: [String: Any]) -> [String: Int] {
        var counts: [String: Int] = [:]
        for group in results["groups"] as? [[String: Any]] ?? [] {
            for step in group["steps"] as? [[String: Any]] ?? [] {
                guard let name = step["step"] as? String else { continue }
                let count = (step["statistics"] as? [String: Any])?["count"] as? Int ?? 0
                counts[name] = max(counts[name] ?? 0, count)
            }
        }
        return counts
    }
}

/// What must be the same after a run as before it.
struct HostState {
    var mountinfoLines: Int
    /// The mount points, each with its source (fields 5 and 10 of mountinfo).
    var mounts: Set<String>
    var avahiAnswers: Bool
    var avahiPid: String?
    var dbusPid: String?

    static func now() async throws -> HostState {
        HostState(
            mountinfoLines: try Proc.read("/proc/self/mountinfo").split(separator: "\n").count,
            mounts: Set(
                try Proc.read("/proc/self/mountinfo").split(separator: "\n").map { line in
                    let fields = line.split(separator: " ")
                    return fields.count > 9 ? "\(fields[4]) \(fields[9])" : String(line)
                }
            ),
            avahiAnswers: try await Self.avahiAnswers(),
            avahiPid: try? Proc.read("/run/avahi-daemon/pid"),
            dbusPid: try? Proc.read("/run/dbus/pid")
        )
    }

    /// Whether the machine's avahi-daemon answers on the machine's system bus (state 2 = running).
    static func avahiAnswers() async throws -> Bool {
        let outcome = try await ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/timeout"),
            [
                "5", "dbus-send", "--system", "--print-reply", "--dest=org.freedesktop.Avahi", "/",
                "org.freedesktop.Avahi.Server.GetState",
            ]
        )
        return outcome.status == 0 && outcome.output.contains("int32 2")
    }
}

/// The names, network namespace inodes and processes of one tool run, read while it runs.
final class RunTrace: Sendable {
    /// A process seen in the run's namespaces.
    struct Member: Hashable, CustomStringConvertible {
        var pid: Int
        var startTime: String
        var command: String
        var description: String { "\(self.pid) \(self.command)" }
    }

    let namespaces: [String]
    let workDir: String
    /// The network namespaces' inode numbers, as /proc/PID/ns/net shows them: `net:[N]`.
    let inodes: [String]
    private let recorded = Mutex<[Member]>([])

    private init(namespaces: [String], workDir: String, inodes: [String]) {
        self.namespaces = namespaces
        self.workDir = workDir
        self.inodes = inodes
    }

    /// Waits for the tool's `namespaces` line (a sweep's first `point`'s, e.g. `loss-0%`) and
    /// reads what identifies them.
    static func start(_ tool: ServerProcess, point: String? = nil) async throws -> RunTrace {
        let workLine = try await tool.line(startingWith: "two-host: work dir ", timeout: .seconds(60))
        let prefix = point.map { "two-host: \($0): namespaces " } ?? "two-host: namespaces "
        let line = try await tool.line(startingWith: prefix, timeout: .seconds(30))
        let names = line.dropFirst(prefix.count).prefix { $0 != "," }.split(separator: " ").map(String.init)
        try #require(names.count == 2, "\(line)")
        let inodes = try names.map { name -> String in
            let attributes = try FileManager.default.attributesOfItem(atPath: "/run/netns/\(name)")
            let inode = try #require(
                (attributes[.systemFileNumber] as? NSNumber)?.uint64Value,
                "the inode of /run/netns/\(name)"
            )
            return "net:[\(inode)]"
        }
        return RunTrace(
            namespaces: names,
            workDir: String(workLine.dropFirst("two-host: work dir ".count)),
            inodes: inodes
        )
    }

    var processes: [Member] { self.recorded.withLock { $0 } }

    /// Notes every process now in the run's namespaces.
    func recordProcesses() {
        let found = self.processesInNamespaces()
        self.recorded.withLock { $0 = found }
    }

    /// The processes whose network namespace is one of the run's.
    func processesInNamespaces() -> [Member] {
        let pids = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { Int($0) }
        return pids.compactMap { pid in
            guard let net = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/ns/net"),
                self.inodes.contains(net)
            else { return nil }
            return Proc.process(pid)
        }
    }

    /// Whether the temp dir (logs, avahi configs) is gone.
    func logsWereDeleted() -> Bool {
        !FileManager.default.fileExists(atPath: self.workDir)
    }

    /// Checks the run left nothing behind and did not touch the machine's own daemons.
    func expectNothingLeftBehind(comparedWith before: HostState) async throws {
        let list = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"), ["ip", "netns", "list"])
        for name in self.namespaces {
            #expect(!list.output.contains(name), "network namespace \(name) remains: \(list.output)")
            #expect(!FileManager.default.fileExists(atPath: "/run/netns/\(name)"))
            let veth = "veth-" + name.dropFirst("lab-".count)  // veth-a-PID, veth-b-PID
            #expect(!FileManager.default.fileExists(atPath: "/sys/class/net/\(veth)"), "\(veth) remains")
        }
        #expect(self.processesInNamespaces().isEmpty, "processes remain in the run's namespaces")
        // Every process seen during the run is gone, zombies included (same pid and start time).
        let survivors = self.processes.filter { Proc.process($0.pid)?.startTime == $0.startTime }
        #expect(survivors.isEmpty, "processes of the run remain: \(survivors)")
        #expect(self.logsWereDeleted(), "the temp dir \(self.workDir) remains")

        let after = try await HostState.now()
        let mounts = try Proc.read("/proc/self/mountinfo")
        // No mount added. (One may be gone: the /run/netns bind mount a killed earlier run left,
        // which this run's teardown removes.)
        #expect(after.mounts.subtracting(before.mounts).isEmpty, "mounts added by the run:\n\(mounts)")
        #expect(after.mountinfoLines <= before.mountinfoLines, "mounts before and after differ:\n\(mounts)")
        // scripts/services.sh started the machine's own daemons before the tests: the run must
        // leave them as they were, answering, with the same pids.
        #expect(before.avahiAnswers, "the machine's avahi-daemon did not answer before the run")
        #expect(after.avahiAnswers, "the machine's avahi-daemon no longer answers")
        #expect(before.avahiPid != nil && after.avahiPid == before.avahiPid, "the machine's avahi-daemon was restarted")
        #expect(before.dbusPid != nil && after.dbusPid == before.dbusPid, "the machine's dbus-daemon was restarted")
    }
}

/// Reading /proc.
enum Proc {
    /// The whole file: procfs files report size 0, so read until end of file.
    static func read(_ path: String) throws -> String {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: path])
        }
        defer { try? handle.close() }
        return String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
    }

    /// The process `pid`, with its start time (field 22 of /proc/PID/stat) to tell it from a
    /// later process that reuses the pid; nil if there is none.
    static func process(_ pid: Int) -> RunTrace.Member? {
        guard let stat = try? Self.read("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 19 else { return nil }
        let command = (try? Self.read("/proc/\(pid)/cmdline"))?.replacingOccurrences(of: "\0", with: " ") ?? ""
        return RunTrace.Member(pid: pid, startTime: String(fields[19]), command: command)
    }
}
