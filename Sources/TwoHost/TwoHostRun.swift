import Foundation
import LabProcesses
import Synchronization

/// One run of the two-host lab: what it made, so that `teardown` removes exactly that.
///
/// Names are unique per tool process (`lab-a-PID`, `veth-a-PID`), so two runs never share
/// anything, and `two-host-net.sh stale` can tell a killed run's namespaces by their PID.
final class TwoHostRun: Sendable {
    let settings: Settings
    let output: Output
    /// This run's number in every name it makes: the tool's process id.
    let id = Int(getpid())
    let started = ContinuousClock.now

    private struct Made {
        /// The temp folder: logs, avahi configs.
        var work: URL?
        /// Whether `two-host-net.sh up` was called (it may have made part of the link).
        var network = false
        /// Each host's anchor process, by side (`a`, `b`).
        var anchors: [String: ServerProcess] = [:]
        /// The lab processes started in the hosts, with the log name each gets in `work`.
        var processes: [(log: String, process: ServerProcess)] = []
    }

    private let made = Mutex(Made())

    init(_ settings: Settings, output: Output) {
        self.settings = settings
        self.output = output
    }

    /// The namespace of host `side` (`a` or `b`).
    func namespace(_ side: String) -> String { "lab-\(side)-\(self.id)" }

    /// The temp folder; set once the run has one.
    var work: URL { self.made.withLock { $0.work! } }

    // MARK: - The link and the hosts

    /// Removes what runs killed with SIGKILL left behind, then makes the temp folder.
    func prepare() async throws {
        let stale = try await self.script(["stale"])
        for line in stale.errors.split(separator: "\n") { self.output.warn(String(line)) }
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/tmp")) ?? []
        where name.hasPrefix("lab-two-host.") {
            let pid = name.dropFirst("lab-two-host.".count).prefix { $0.isNumber }
            if let pid = Int32(pid), !Self.isTwoHost(pid) {
                try? FileManager.default.removeItem(atPath: "/tmp/\(name)")
            }
        }
        var template = Array("/tmp/lab-two-host.\(self.id).XXXXXX".utf8CString)
        guard let path = mkdtemp(&template) else { throw Failure("mkdtemp failed: errno \(errno)") }
        let work = URL(fileURLWithPath: String(cString: path))
        for side in ["a", "b"] {
            try FileManager.default.createDirectory(
                at: work.appendingPathComponent(side),
                withIntermediateDirectories: true
            )
        }
        self.made.withLock { $0.work = work }
    }

    /// Makes the two namespaces and the veth pair; returns the link's description.
    func linkUp() async throws -> String {
        self.made.withLock { $0.network = true }
        let up = try await self.script(
            ["up", "\(self.id)", self.work.path, self.settings.delay ?? "", self.settings.rate ?? ""]
        )
        guard let link = up.output.split(separator: "\n").first(where: { $0.hasPrefix("link: ") }) else {
            throw Failure("two-host-net.sh up printed no link line", logs: [("output", up.output + up.errors)])
        }
        let description = String(link.dropFirst("link: ".count))
        if self.settings.delay != nil || self.settings.rate != nil, description.contains("unshaped") {
            self.output.warn("the link is NOT shaped: tc failed")
        } else if self.settings.delay != nil, description.contains("no delay") {
            self.output.warn("the link is NOT delayed by \(self.settings.delay!): netem is unavailable")
        }
        return description
    }

    /// Starts both hosts' anchors (each with its dbus-daemon and avahi-daemon) and waits
    /// until both are ready.
    func hostsUp() async throws -> (a: ServerProcess, b: ServerProcess) {
        var anchors: [String: ServerProcess] = [:]
        for side in ["a", "b"] {
            let anchor = try ServerProcess(
                URL(fileURLWithPath: "/usr/bin/env"),
                [
                    "ip", "netns", "exec", self.namespace(side), "unshare", "--mount", "--propagation", "private",
                    "/bin/bash", self.settings.script.path, "host", "lab-\(side)", "veth-\(side)-\(self.id)",
                    self.work.appendingPathComponent(side).path,
                ]
            )
            self.made.withLock { $0.anchors[side] = anchor }
            anchors[side] = anchor
        }
        for side in ["a", "b"] {
            do {
                _ = try await anchors[side]!.line(startingWith: "ready", timeout: .seconds(20))
            } catch let failure as ServerProcess.Failure where !Task.isCancelled {
                throw Failure("host lab-\(side) (dbus-daemon, avahi-daemon) is not ready: \(failure)")
            }
        }
        return (anchors["a"]!, anchors["b"]!)
    }

    /// Starts `arguments` inside the host of `anchor`: its network and mount namespaces.
    /// The system bus is that host's, never one inherited from the caller.
    func start(in anchor: ServerProcess, log: String, _ arguments: [String]) throws -> ServerProcess {
        let process = try ServerProcess(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["nsenter", "--target", "\(anchor.pid)", "--net", "--mount", "--", "env", "-u", "DBUS_SYSTEM_BUS_ADDRESS"]
                + arguments
        )
        self.made.withLock { $0.processes.append((log, process)) }
        return process
    }

    /// Runs `two-host-net.sh` with `arguments`; throws with its stderr if it fails.
    @discardableResult
    func script(_ arguments: [String]) async throws -> ChildProcess.Outcome {
        let outcome = try await ChildProcess.run(
            URL(fileURLWithPath: "/bin/bash"),
            [self.settings.script.path] + arguments
        )
        guard outcome.status == 0 else {
            throw Failure(
                "two-host-net.sh \(arguments.first ?? "") failed with status \(outcome.status)",
                logs: [("its stderr", outcome.errors)]
            )
        }
        return outcome
    }

    /// Whether process `pid` is a two-host run (a tool that is still running).
    static func isTwoHost(_ pid: Int32) -> Bool {
        (try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8))?.contains("two-host") ?? false
    }

    // MARK: - Teardown

    /// Removes everything the run made, whatever state it is in: the lab processes (SIGTERM
    /// first, so that `lab serve` writes its report), the hosts' daemons, the namespaces and
    /// the link, the temp folder (its logs copied to `<out>/logs` if kept or if `failed`).
    func teardown(failed: Bool) async {
        let start = ContinuousClock.now
        let made = self.made.withLock { $0 }
        await Self.stop(made.processes.map(\.process))
        await Self.stop(Array(made.anchors.values))
        if made.network {
            do {
                try await self.script(["down", "\(self.id)", made.work?.path ?? ""])
            } catch {
                self.output.warn("\(error)")
            }
        }
        if let work = made.work {
            for (log, process) in made.processes {
                try? Data(process.output.utf8).write(to: work.appendingPathComponent("\(log).out"))
                try? Data(process.errors.utf8).write(to: work.appendingPathComponent("\(log).err"))
            }
            if self.settings.keepLogs || failed {
                let logs = self.settings.out.appendingPathComponent("logs")
                try? FileManager.default.removeItem(at: logs)
                if (try? FileManager.default.copyItem(at: work, to: logs)) != nil {
                    self.output.note("logs in \(logs.path)")
                }
            }
            try? FileManager.default.removeItem(at: work)
        }
        self.output.say("torn down in \(seconds(since: start)) s")
    }

    /// Stops every process still running: SIGTERM, then SIGKILL after 10 s.
    static func stop(_ processes: [ServerProcess]) async {
        await withTaskGroup(of: Void.self) { group in
            for process in processes where !process.hasExited {
                group.addTask { _ = try? await process.stop(signal: SIGTERM, timeout: .seconds(10)) }
            }
        }
    }
}
