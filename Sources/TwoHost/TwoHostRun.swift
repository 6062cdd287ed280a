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
    /// What the kernel can shape a link with, once probed.
    private let kernel = Mutex<Kernel?>(nil)

    /// The run's conditions, with what delays the packets chosen for this kernel.
    var conditions: LinkConditions { self.settings.conditions.resolved(on: self.kernel.withLock { $0 }) }

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

    /// What this machine can shape the link with; throws, before anything is made, if it
    /// cannot apply every condition asked for (those of every sweep point too), naming each
    /// and what it lacks.
    func probe() async throws -> Kernel? {
        var conditions = self.settings.conditions
        if let highest = self.settings.sweepLosses.max() { conditions.loss = highest }
        if let longest = self.settings.sweepDelays.max(), longest > 0 { conditions.delay = longest }
        guard !conditions.isEmpty else { return nil }
        let kernel = Kernel(probe: try await self.script(["probe"]).output)
        let problems = conditions.problems(on: kernel)
        guard problems.isEmpty else { throw Failure(problems.joined(separator: "\n")) }
        if conditions.delayMechanism(on: kernel) == .queue,
            !FileManager.default.isExecutableFile(atPath: self.settings.delayer.path)
        {
            throw Failure(
                "the delay needs link-delay (no netem here), and there is none at \(self.settings.delayer.path): swift build --product link-delay"
            )
        }
        self.kernel.withLock { $0 = kernel }
        return kernel
    }

    /// Makes the two namespaces and the veth pair, shaped as the conditions say; returns the
    /// link's description and the lines saying how each condition was applied.
    func linkUp(_ conditions: LinkConditions? = nil) async throws -> (description: String, applied: [String]) {
        self.made.withLock { $0.network = true }
        let up = try await self.script(
            ["up", "\(self.id)", self.work.path],
            environment: (conditions ?? self.conditions).environment.merging(
                ["LINK_DELAYER": self.settings.delayer.path],
                uniquingKeysWith: { $1 }
            )
        )
        let lines = up.output.split(separator: "\n").map(String.init)
        guard let link = lines.first(where: { $0.hasPrefix("link: ") }) else {
            throw Failure("two-host-net.sh up printed no link line", logs: [("output", up.output + up.errors)])
        }
        let applied = lines.filter { $0.hasPrefix("applied: ") }.map { String($0.dropFirst("applied: ".count)) }
        return (String(link.dropFirst("link: ".count)), applied)
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
    func script(_ arguments: [String], environment: [String: String] = [:]) async throws -> ChildProcess.Outcome {
        let outcome = try await ChildProcess.run(
            URL(fileURLWithPath: "/bin/bash"),
            [self.settings.script.path] + arguments,
            environment: environment
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

    /// Stops the lab processes (SIGTERM first, so that `lab serve` writes its report) and the
    /// hosts' daemons, removes the namespaces and the link, and keeps the processes' output in
    /// the temp folder: what one point of a sweep made, or, in `teardown`, the last.
    func tearDownHosts() async {
        let made = self.made.withLock { made in
            defer { (made.processes, made.anchors, made.network) = ([], [:], false) }
            return made
        }
        await Self.stop(made.processes.map(\.process))
        await Self.stop(Array(made.anchors.values))
        if made.network {
            do {
                try await self.script(["down", "\(self.id)", made.work?.path ?? ""])
            } catch {
                self.output.warn("\(error)")
            }
            if let work = made.work { await Self.reapHolders(in: work) }
        }
        if let work = made.work {
            for (log, process) in made.processes {
                try? Data(process.output.utf8).write(to: work.appendingPathComponent("\(log).out"))
                try? Data(process.errors.utf8).write(to: work.appendingPathComponent("\(log).err"))
            }
        }
    }

    /// Removes everything the run made, whatever state it is in: the lab processes, the
    /// hosts' daemons, the namespaces and the link (`tearDownHosts`), the temp folder (its
    /// logs copied to `<out>/logs` if kept or if `failed`).
    func teardown(failed: Bool) async {
        let start = ContinuousClock.now
        await self.tearDownHosts()
        let made = self.made.withLock { $0 }
        if let work = made.work {
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

    /// Reaps the link's holders, which `down` stopped: `two-host-net.sh up` started them and
    /// exited, so they are this tool's children (`TwoHost.perform` makes it their
    /// subreaper) and would stay zombies where PID 1 does not reap (as in this sandbox).
    /// Waits up to 5 s for each.
    static func reapHolders(in work: URL) async {
        for side in ["a", "b"] {
            let file = work.appendingPathComponent("link-delay-\(side).pid")
            guard let text = try? String(contentsOf: file, encoding: .utf8),
                let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines))
            else { continue }
            for _ in 0..<100 {
                var status: Int32 = 0
                let reaped = waitpid(pid, &status, WNOHANG)
                if reaped != 0 { break }  // reaped, or not ours (-1)
                try? await Task.sleep(for: .milliseconds(50))
            }
            try? FileManager.default.removeItem(at: file)
        }
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

extension TwoHostRun {
    /// The loss each direction met so far (nothing where nftables does not count), and what
    /// each end's `link-delay` did (nothing where the link is not delayed by it). Throws if a
    /// holder is gone: its end then dropped every packet since.
    func linkFigures() async throws -> LinkFigures {
        let output = try await self.script(["counters", "\(self.id)", self.work.path]).output
        if let gone = output.split(separator: "\n").first(where: { $0.hasPrefix("delayer ") && $0.contains(" gone") }) {
            throw Failure("link-delay ended during the run (its end of the link dropped every packet since): \(gone)")
        }
        return LinkFigures(output)
    }

    /// `<out>/link.json`: the conditions asked for, how each was applied, what the kernel
    /// could do, the loss measured over the two-host run, and, with a delay, the round trip
    /// asked for against the smallest the run's connections saw (`rtt`, ns, from `TCP_INFO`)
    /// and what each end's holder did; the segments each host's TCP received out of order.
    func writeLink(
        _ link: (description: String, applied: [String]),
        kernel: Kernel?,
        figures: LinkFigures,
        conditions: LinkConditions? = nil,
        folder: String = "",
        rtt: Double? = nil
    ) throws {
        let conditions = conditions ?? self.conditions
        var document: [String: Any] = [
            "configured": conditions.description,
            "link": link.description,
            "applied": link.applied,
            "measured": figures.loss.map {
                [
                    "direction": $0.direction, "sent": $0.sent, "delivered": $0.delivered, "dropped": $0.dropped,
                    "loss": $0.loss,
                ] as [String: Any]
            },
        ]
        if let delay = conditions.delay {
            var delayed: [String: Any] = [
                "mechanism": conditions.delayBy?.rawValue ?? "netem",
                "eachEndMilliseconds": delay * 1000,
                "configuredRoundTripMilliseconds": delay * 2000,
                "holders": figures.delayers.map(\.json),
            ]
            if let jitter = conditions.jitter { delayed["jitterMilliseconds"] = jitter * 1000 }
            if let rtt {
                delayed["measuredMinRoundTripMilliseconds"] = rtt / 1e6
                delayed["measuredOverConfigured"] = rtt / 1e6 / (delay * 2000)
            }
            document["delay"] = delayed
        }
        if !figures.outOfOrder.isEmpty { document["outOfOrderSegments"] = figures.outOfOrder }
        if let kernel {
            document["kernel"] = [
                "netem": kernel.netem, "tbf": kernel.tbf, "nftables": kernel.nftables, "ethtool": kernel.ethtool,
                "nfqueue": kernel.nfqueue,
            ]
        }
        let data = try JSONSerialization.data(withJSONObject: document, options: [.prettyPrinted, .sortedKeys])
        try data.write(to: self.settings.out.appendingPathComponent("\(folder)link.json"))
    }
}
