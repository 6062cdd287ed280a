import Foundation
import LabProcesses
import LabTestSupport
import Testing

/// The client fleet on a real scheduler (docs/several-hosts.md, "On a cluster"): a Slurm
/// cluster of two nodes, `lab-a` and `lab-b`, each a network, UTS and mount namespace with its
/// own munged and slurmd, slurmctld on `lab-a` (`scripts/slurm-cluster.sh`). `lab serve` runs
/// on `lab-a`; the shipped batch script `Scenarios/slurm/fleet.sbatch` runs one shard per node
/// through `srun` and merges them. Each test brings the cluster up and checks that taking it
/// down leaves nothing: no namespace, no daemon, no mount, the machine's host name and
/// /etc/hosts as they were.
///
/// Runs as root (CI does). Serialized: one cluster at a time, each counting the machine's mounts.
@Suite(.tier(.slurm), .serialized, .timeLimit(.minutes(4)))
struct SlurmFleetTests {
    static let scenario = RepositoryPaths.root.appendingPathComponent("Scenarios/slurm/fleet.json")

    @Test("srun: two shards of 1,000 clients on two nodes merge into the whole run, exactly, in one window")
    func fleetMergesIntoTheWholeRun() async throws {
        try await SlurmCluster.with { cluster in
            let job = try await cluster.submit(environment: ["START_IN": "5"])
            #expect(job.status == 0, "the job (its merge) failed:\n\(job.log)")
            let merged = try TwoHostTests.json(job.out.appendingPathComponent("merged/results.json"))
            let shards = try (1...2).map { try TwoHostTests.json(job.out.appendingPathComponent("shard-\($0)/results.json")) }

            // Two nodes, one shard each, as Slurm placed them.
            let hosts = shards.map { (($0["metadata"] as? [String: Any])?["machine"] as? [String: Any])?["hostname"] as? String }
            #expect(Set(hosts.compactMap { $0 }) == ["lab-a", "lab-b"], "\(hosts)")

            // Every planned iteration counted once: 1,000 clients × 6, no more, no fewer, no errors.
            #expect(merged["plannedIterations"] as? Int == 6_000)
            #expect(merged["completedIterations"] as? Int == 6_000)
            #expect(merged["errors"] as? Int == 0)
            #expect(shards.map { $0["completedIterations"] as? Int ?? 0 } == [3_000, 3_000])
            #expect(SlurmCluster.count(merged, step: "exchange") == 6_000)

            // The merged histograms are the shards' added bucket by bucket, every step.
            let added = SlurmCluster.histograms(shards[0]).merging(SlurmCluster.histograms(shards[1])) { a, b in
                a.merging(b, uniquingKeysWith: +)
            }
            let mergedHistograms = SlurmCluster.histograms(merged)
            #expect(mergedHistograms.keys.sorted() == added.keys.sorted())
            let unequal = added.keys.filter { mergedHistograms[$0] != added[$0] }.sorted()
            #expect(unequal.isEmpty, "steps whose merged histogram is not the shards' sum: \(unequal)")
            #expect(SlurmCluster.histograms(merged)["cx-x25519 exchange"]?.values.reduce(0, +) == 6_000)

            // One start, one window: the shards' measured windows overlap by 90% or more, as the
            // merge computes it and as the shards' own windows give it.
            let metadata = try #require(merged["metadata"] as? [String: Any])
            let overlap = try #require(metadata["shardWindowOverlap"] as? Double, "\(metadata.keys.sorted())")
            #expect(overlap >= 0.9, "measured windows overlap \(overlap)")
            let windows = shards.map(SlurmCluster.window)
            let common = windows.map(\.upperBound).min()! - windows.map(\.lowerBound).max()!
            let union = windows.map(\.upperBound).max()! - windows.map(\.lowerBound).min()!
            #expect(abs(common / union - overlap) < 0.002, "the shards' windows \(windows) against \(overlap)")
            let listed = metadata["shardWindows"] as? [[String: Any]] ?? []
            #expect(listed.map { $0["shard"] as? String } == ["1/2", "2/2"])
            #expect(listed.map { $0["iterations"] as? Int } == [3_000, 3_000])
            // One grid: the merge moved no shard's intervals.
            #expect(!job.log.contains("intervals"), "\(job.log)")
            let report = try String(contentsOf: job.out.appendingPathComponent("merged/report.md"), encoding: .utf8)
            #expect(report.contains("Measured windows overlap"), "report.md says how well the shards overlapped")
            #expect(report.contains("| Host | lab-a, lab-b (the shards' hosts; the rows below are lab-a's) |"), "both nodes")
        }
    }

    @Test("A shard killed mid-run fails the merge, named; the other shard's run is still reported")
    func killedShardFailsTheMerge() async throws {
        try await SlurmCluster.with { cluster in
            let start = Date().addingTimeInterval(5)
            async let finished = cluster.submit(
                environment: ["START_IN": "5", "RUN_ARGS": "--set load.iterations=40"]
            )
            // Shard 2 records its pid when it begins; it is killed once the common start has
            // passed, in the middle of its 40,000 exchanges.
            let record = try await cluster.shardRecord(2, jobStartingBy: start)
            let pid = try #require(record["pid"] as? Int)
            try await SlurmCluster.waitUntil(start.addingTimeInterval(0.5))
            #expect(kill(pid_t(pid), SIGKILL) == 0, "shard 2 was still running at the start plus 0.5 s")
            let job = try await finished
            #expect(job.status == 1, "the merge fails:\n\(job.log)")
            #expect(job.log.contains("failed shard: shard 2/2 on lab-b"), "\(job.log)")
            #expect(!job.log.contains("failed shard: shard 1/2"), "\(job.log)")
            let report = try String(contentsOf: job.out.appendingPathComponent("merged/report.md"), encoding: .utf8)
            #expect(report.contains("shard 2/2 on lab-b"), "report.md names the failed shard")
            let merged = try TwoHostTests.json(job.out.appendingPathComponent("merged/results.json"))
            let failed = (merged["metadata"] as? [String: Any])?["failedShards"] as? [[String: Any]] ?? []
            #expect(failed.map { $0["shard"] as? String } == ["2/2"])
        }
    }

    @Test("Shards that cannot reach the server fail before the common start, each with the reason")
    func lostServerFailsFast() async throws {
        try await SlurmCluster.with { cluster in
            // Nothing listens on lab-a's port 1; the common start is 60 s away.
            let job = try await cluster.submit(environment: ["START_IN": "60", "SERVER": "lab-a:1"])
            let start = try #require(job.start, "\(job.log)")
            #expect(job.ended < start, "the job ended before the start it would have waited for")
            #expect(job.status == 1, "\(job.log)")
            for (shard, host) in [(1, "lab-a"), (2, "lab-b")] {
                #expect(job.log.contains("failed shard: shard \(shard)/2 on \(host)"), "\(job.log)")
                let record = try TwoHostTests.json(job.out.appendingPathComponent("shard-\(shard)/shard.json"))
                #expect(record["state"] as? String == "failed")
                let reason = record["reason"] as? String ?? ""
                #expect(reason.contains("lab-a:1"), "the reason names the server: \(reason)")
                #expect(record["exitCode"] as? Int != 0)
            }
        }
    }
}

/// A two-node Slurm cluster (`scripts/slurm-cluster.sh`) and a `lab serve` on `lab-a` at
/// `lab-a:7000`, the scenario's address, for one test.
struct SlurmCluster {
    static let script = RepositoryPaths.root.appendingPathComponent("scripts/slurm-cluster.sh")
    static let batch = RepositoryPaths.root.appendingPathComponent("Scenarios/slurm/fleet.sbatch")

    let run: Int
    let work: URL

    /// What a finished job left.
    struct Job {
        var status: Int32
        /// Its batch script's output and the `sbatch` command's.
        var log: String
        /// Its folder: shard-K and merged.
        var out: URL
        /// When its shards were to begin, as it printed it.
        var start: Date?
        /// When its last line was seen.
        var ended: Date
    }

    /// Brings a cluster up, serves on `lab-a`, runs `body`, and takes everything down, checking
    /// that nothing is left.
    static func with(_ body: (SlurmCluster) async throws -> Void) async throws {
        let before = try await HostState.now()
        let hostsBefore = try String(contentsOfFile: "/etc/hosts", encoding: .utf8)
        let hostname = ProcessInfo.processInfo.hostName
        let mungeDirectory = FileManager.default.fileExists(atPath: "/run/munge")
        let cluster = SlurmCluster(run: Int(getpid()), work: try TwoHostTests.temporaryFolder("lab-slurm"))
        defer { try? FileManager.default.removeItem(at: cluster.work) }
        var failure: (any Error)?
        do {
            try await cluster.bash("up")
            let server = try ServerProcess(
                URL(fileURLWithPath: "/bin/bash"),
                [
                    Self.script.path, "on", "lab-a", "\(cluster.run)", cluster.work.path,
                    LabProcess.executable.path, "serve", "--host", "0.0.0.0", "--port", "7000",
                    "--db", cluster.work.appendingPathComponent("serve.sqlite").path,
                ]
            )
            _ = try await server.line(startingWith: "listening on", timeout: .seconds(30))
            do { try await body(cluster) } catch { failure = error }
            server.terminate()
        } catch {
            failure = error
        }
        try await cluster.bash("down")
        // Nothing left: no namespace, no process of the cluster, no mount; the machine's own
        // host name and /etc/hosts as they were.
        let namespaces = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"), ["ip", "netns", "list"]).output
        #expect(!namespaces.contains("-\(cluster.run)"), "namespaces left: \(namespaces)")
        let left = try Self.processes(mentioning: cluster.work.path)
        #expect(left.isEmpty, "processes left: \(left)")
        let after = try await HostState.now()
        #expect(after.mounts == before.mounts, "mounts changed: \(after.mounts.symmetricDifference(before.mounts))")
        #expect(ProcessInfo.processInfo.hostName == hostname)
        #expect(try String(contentsOfFile: "/etc/hosts", encoding: .utf8) == hostsBefore)
        #expect(FileManager.default.fileExists(atPath: "/run/munge") == mungeDirectory, "/run/munge made or removed")
        if let failure { throw failure }
    }

    /// `slurm-cluster.sh COMMAND RUN WORK`, which must succeed.
    func bash(_ command: String) async throws {
        let outcome = try await ChildProcess.run(
            URL(fileURLWithPath: "/bin/bash"),
            [Self.script.path, command, "\(self.run)", self.work.path]
        )
        guard outcome.status == 0 else {
            throw ClusterFailure("slurm-cluster.sh \(command) exited \(outcome.status):\n\(outcome.output)\n\(outcome.errors)")
        }
    }

    /// Submits the fleet's batch script on `lab-a` for two nodes, one task each, and waits for
    /// its last line (`fleet: merge exit N`): `sbatch --wait` polls the controller at intervals
    /// that grow to tens of seconds.
    func submit(environment: [String: String]) async throws -> Job {
        let out = self.work.appendingPathComponent("out")
        let variables = [
            "LAB": LabProcess.executable.path, "SCENARIO": SlurmFleetTests.scenario.path, "OUT": out.path,
        ].merging(environment) { _, given in given }
        let outcome = try await ChildProcess.run(
            URL(fileURLWithPath: "/bin/bash"),
            [Self.script.path, "on", "lab-a", "\(self.run)", self.work.path, "/usr/bin/env"]
                + variables.map { "\($0.key)=\($0.value)" }.sorted()
                + [
                    "sbatch", "--parsable", "--nodes=2", "--ntasks-per-node=1", "--chdir=\(self.work.path)",
                    "--output=\(self.work.path)/job-%j.out", Self.batch.path,
                ]
        )
        let id = outcome.output.trimmingCharacters(in: .whitespacesAndNewlines)
        guard outcome.status == 0, !id.isEmpty, id.allSatisfy(\.isNumber) else {
            throw ClusterFailure("sbatch failed (\(outcome.status)): \(outcome.output) \(outcome.errors)")
        }
        let file = self.work.appendingPathComponent("job-\(id).out")
        let last = "fleet: merge exit "
        var log = ""
        var status: Int32? = nil
        let deadline = Date().addingTimeInterval(150)
        while status == nil {
            guard Date() < deadline else { throw ClusterFailure("job \(id) did not end in 150 s:\n\(log)") }
            try await Task.sleep(for: .milliseconds(50))
            log = (try? String(contentsOf: file, encoding: .utf8)) ?? ""
            // Complete lines only: the last one may still be arriving.
            let lines = log.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            status = lines.last { $0.hasPrefix(last) }.flatMap { Int32($0.dropFirst(last.count)) }
        }
        let ended = Date()
        let start = log.split(separator: "\n").first { $0.hasPrefix("fleet: job") }.flatMap { line in
            line.split(separator: "(").last.flatMap { Double($0.dropLast()) }
        }
        return Job(
            status: status ?? -1,
            log: log,
            out: out.appendingPathComponent(id),
            start: start.map { Date(timeIntervalSince1970: $0) },
            ended: ended
        )
    }

    /// Shard `index`'s shard.json once it exists in the only job folder, at most until `by`.
    func shardRecord(_ index: Int, jobStartingBy by: Date) async throws -> [String: Any] {
        let out = self.work.appendingPathComponent("out")
        while Date() < by {
            let jobs = (try? FileManager.default.contentsOfDirectory(atPath: out.path)) ?? []
            if let job = jobs.first {
                let file = out.appendingPathComponent("\(job)/shard-\(index)/shard.json")
                if let record = try? TwoHostTests.json(file), record["pid"] != nil { return record }
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw ClusterFailure("shard \(index) wrote no shard.json before its start")
    }

    /// Sleeps until `date` on the wall clock: the shards' common start is a wall-clock instant.
    static func waitUntil(_ date: Date) async throws {
        let ahead = date.timeIntervalSinceNow
        if ahead > 0 { try await Task.sleep(for: .milliseconds(Int(ahead * 1000))) }
    }

    /// The pids and command lines of the processes whose command line names `text`.
    static func processes(mentioning text: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: "/proc").compactMap { pid in
            guard Int(pid) != nil, pid != "\(getpid())",
                let line = try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8)
            else { return nil }
            let command = line.replacingOccurrences(of: "\0", with: " ")
            return command.contains(text) ? "\(pid) \(command)" : nil
        }
    }

    /// "GROUP STEP" → bucket → count, from results.json's sparse histograms.
    static func histograms(_ results: [String: Any]) -> [String: [Int: Int]] {
        var all: [String: [Int: Int]] = [:]
        for group in results["groups"] as? [[String: Any]] ?? [] {
            let key = group["key"] as? [String: Any] ?? [:]
            // The server's own groups: each shard's covers the whole server, the merge has none.
            guard key["flow"] as? String != "server" else { continue }
            let name = "\(key["flow"] as? String ?? "")-\(key["suite"] as? String ?? "")"
            for step in group["steps"] as? [[String: Any]] ?? [] {
                let counts = (step["histogram"] as? [String: Any])?["counts"] as? [[Int]] ?? []
                all["\(name) \(step["step"] as? String ?? "")"] = Dictionary(
                    counts.map { (Self.bucket($0[0]), $0[1]) },
                    uniquingKeysWith: +
                )
            }
        }
        return all
    }

    /// The highest value of `value`'s bucket in the lab's histograms (3 significant digits,
    /// lowest discernible 1: 2,048 sub-buckets, one unit wide up to 2,047, then 2^k wide from
    /// 2^(k+10)). results.json writes a bucket at that value, but the buckets of the exact
    /// minimum and maximum at those values, which differ between a shard and the merge.
    static func bucket(_ value: Int) -> Int {
        guard value >= 2_048 else { return value }
        let shift = (Int.bitWidth - 1 - value.leadingZeroBitCount) - 10
        return ((value >> shift) << shift) + (1 << shift) - 1
    }

    /// The count of `step` over a run's groups.
    static func count(_ results: [String: Any], step name: String) -> Int {
        (results["groups"] as? [[String: Any]] ?? []).reduce(0) { total, group in
            let steps = group["steps"] as? [[String: Any]] ?? []
            let step = steps.first { $0["step"] as? String == name }
            return total + ((step?["statistics"] as? [String: Any])?["count"] as? Int ?? 0)
        }
    }

    /// A shard's measured window, in seconds since 1970.
    static func window(_ results: [String: Any]) -> ClosedRange<Double> {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let from = ((results["metadata"] as? [String: Any])?["measuredFrom"] as? String).flatMap(formatter.date)
        let start = from?.timeIntervalSince1970 ?? 0
        return start...(start + Double(results["measuredNanoseconds"] as? Int ?? 0) / 1e9)
    }
}

/// Why the cluster could not do its part.
struct ClusterFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
