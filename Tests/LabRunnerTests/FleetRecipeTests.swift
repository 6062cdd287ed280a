import Foundation
import LabTestSupport
import Testing

/// The fleet recipe: the Dockerfile, Scenarios/k8s/fleet.yaml and the GitHub Actions example,
/// checked offline by independent tools (hadolint, kubernetes-validate, check-jsonschema's
/// GitHub workflow schema). `docker` and a cluster are not on every machine: nothing here
/// builds the image or applies the manifest.
@Suite(.tier(.unit)) struct FleetRecipeTests {
    static func tool(_ arguments: [String]) async throws -> ChildProcess.Outcome {
        try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"), arguments, in: RepositoryPaths.root)
    }

    @Test("The Dockerfile passes hadolint, and builds with the libraries scripts/setup.sh installs")
    func dockerfile() async throws {
        let lint = try await Self.tool(["hadolint", "Dockerfile"])
        #expect(lint.status == 0, "\(lint.output)\(lint.errors)")
        let text = try String(contentsOf: RepositoryPaths.root.appendingPathComponent("Dockerfile"), encoding: .utf8)
        // What follows each FROM (the header comment comes first).
        let stages = Array(text.components(separatedBy: "\nFROM ").dropFirst())
        #expect(stages.count == 2, "a build stage and a runtime stage")
        let setup = try String(
            contentsOf: RepositoryPaths.root.appendingPathComponent("scripts/setup.sh"),
            encoding: .utf8
        )
        for library in ["libssl-dev", "libavahi-compat-libdnssd-dev", "libjemalloc-dev", "libsqlite3-dev"] {
            #expect(
                setup.contains(library) && stages[0].contains(library),
                "\(library) in setup.sh and the build stage"
            )
        }
        for runtime in ["libssl3", "libavahi-compat-libdnssd1", "libjemalloc2", "libsqlite3-0"] {
            #expect(stages.last?.contains(runtime) == true, "\(runtime) in the runtime stage")
        }
        #expect(stages[0].contains("swift build -c release --static-swift-stdlib --product lab"))
    }

    /// fleet.yaml rendered as `envsubst '$SHARDS $IMAGE $RUN_ID $START_AT'` does, then read
    /// back: the kinds, the Jobs' counts, the shard and merge commands, the Service.
    static func render(shards: Int, folder: URL) async throws -> (file: URL, facts: [String: Any]) {
        let file = folder.appendingPathComponent("fleet-\(shards).yaml")
        let script = #"""
            import json, string, sys, yaml
            text = string.Template(open("Scenarios/k8s/fleet.yaml").read()).safe_substitute(
                SHARDS=sys.argv[1], IMAGE="registry.example.com/crypto-lab:0.1.0",
                RUN_ID="0b7a0c2e-1111-4a2b-9c3d-123456789abc", START_AT="2026-11-25T06:00:00Z")
            open(sys.argv[2], "w").write(text)
            docs = list(yaml.safe_load_all(text))
            jobs = {d["metadata"]["labels"]["role"]: d for d in docs if d["kind"] == "Job"}
            def script(job):
                spec = job["spec"]["template"]["spec"]
                return [c["args"][0] for c in spec.get("initContainers", []) + spec["containers"]]
            service = next(d for d in docs if d["kind"] == "Service")
            print(json.dumps({
                "kinds": sorted(d["kind"] for d in docs),
                "completions": jobs["shard"]["spec"]["completions"],
                "parallelism": jobs["shard"]["spec"]["parallelism"],
                "shard": script(jobs["shard"]), "merge": script(jobs["merge"]),
                "jobs": [j["metadata"]["name"] for j in jobs.values()],
                "deadlines": [j["spec"].get("activeDeadlineSeconds") for j in jobs.values()],
                "service": service["metadata"]["name"], "ports": [p["port"] for p in service["spec"]["ports"]],
                "unfilled": "${" in text}))
            """#
        let outcome = try await Self.tool(["python3", "-c", script, "\(shards)", file.path])
        try #require(outcome.status == 0, "\(outcome.errors)")
        return (file, try #require(try JSONSerialization.jsonObject(with: Data(outcome.output.utf8)) as? [String: Any]))
    }

    @Test(
        "fleet.yaml, rendered for 4 and for 7 shards, passes kubernetes-validate; the count is written once",
        arguments: [4, 7]
    )
    func manifest(shards: Int) async throws {
        let folder = try CLITests.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (file, facts) = try await Self.render(shards: shards, folder: folder)
        let validated = try await Self.tool(["kubernetes-validate", "--strict", "--quiet", file.path])
        #expect(validated.status == 0, "\(validated.output)\(validated.errors)")
        #expect(facts["kinds"] as? [String] == ["Deployment", "Job", "Job", "PersistentVolumeClaim", "Service"])
        #expect(facts["completions"] as? Int == shards && facts["parallelism"] as? Int == shards)
        #expect(facts["unfilled"] as? Bool == false, "a ${…} left after rendering")
        let shard = (facts["shard"] as? [String])?.joined() ?? ""
        for part in [
            "--shard \"$shard/\(shards)\"", "--run-id \"0b7a0c2e-", "--start-at \"2026-11-25T06:00:00Z\"",
            "/results/0b7a0c2e-",
        ] {
            #expect(shard.contains(part), "\(part) in the shard command: \(shard)")
        }
        let merge = (facts["merge"] as? [String])?.joined(separator: "\n") ?? ""
        #expect(merge.contains("-ge \(shards) ]"), "the merge waits for every shard: \(merge)")
        #expect(merge.contains("lab merge /results/0b7a0c2e-") && !merge.contains("--allow-partial"))
        #expect(
            (facts["jobs"] as? [String])?.allSatisfy { $0.hasSuffix("-0b7a0c2e-1111-4a2b-9c3d-123456789abc") } == true
        )
        #expect((facts["deadlines"] as? [Int])?.count == 2, "every Job has a deadline")
        // The Service is what the scenario's address names.
        let scenario =
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: RepositoryPaths.root.appendingPathComponent("Scenarios/k8s/fleet.json"))
            ) as? [String: Any]
        let address = ((scenario?["server"] as? [String: Any])?["address"] as? String) ?? ""
        #expect(address.hasPrefix("\(facts["service"] as? String ?? "?").") && address.hasSuffix(":7000"))
        #expect((facts["ports"] as? [Int])?.contains(7000) == true)
    }

    @Test(
        "fleet.yaml's merge waits until every shard has ended, or for its cap when one was killed or never began",
        arguments: [
            (["finished", "failed"], 0),  // both ended: no wait
            (["finished", "running"], 40),  // one killed mid-run (its record still says running): the cap
            (["finished"], 40),  // one never wrote a record: the cap
        ]
    )
    func mergeWaitsForTheShards(states: [String], rounds: Int) async throws {
        let folder = try CLITests.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (_, facts) = try await Self.render(shards: 2, folder: folder)
        let wait = try #require((facts["merge"] as? [String])?.first, "the wait-for-shards init container")
        let results = folder.appendingPathComponent("results")
        for (index, state) in states.enumerated() {
            let shard = results.appendingPathComponent("0b7a0c2e-1111-4a2b-9c3d-123456789abc/shard-\(index + 1)")
            try FileManager.default.createDirectory(at: shard, withIntermediateDirectories: true)
            try #"{ "format" : "crypto-lab/shard/1", "state" : "\#(state)" }"#.write(
                to: shard.appendingPathComponent("shard.json"),
                atomically: true,
                encoding: .utf8
            )
        }
        // The script as the pod runs it, on this folder, with 40 rounds of 10 ms for 360 of 5 s.
        let script =
            wait.replacingOccurrences(of: "/results/", with: results.path + "/")
            .replacingOccurrences(of: "sleep 5", with: "sleep 0.01")
            .replacingOccurrences(of: "-ge 360", with: "-ge 40") + "\necho \"rounds $i\"\n"
        #expect(script.contains("-ge 40") && script.contains("sleep 0.01"), "the cap and the pause: \(wait)")
        let ran = try await Self.tool(["sh", "-c", script])
        #expect(ran.status == 0, "\(ran.errors)")
        #expect(ran.output.trimmingCharacters(in: .whitespacesAndNewlines) == "rounds \(rounds)", "\(states)")
    }

    @Test("Slurm, Kubernetes and GitHub Actions hold their shards to one start, set once for the run")
    func oneStartBarrier() async throws {
        let root = RepositoryPaths.root
        let sbatch = try String(contentsOf: root.appendingPathComponent("Scenarios/slurm/fleet.sbatch"), encoding: .utf8)
        let syntax = try await Self.tool(["bash", "-n", "Scenarios/slurm/fleet.sbatch"])
        #expect(syntax.status == 0, "\(syntax.errors)")
        // One instant, computed once by the batch script before the job step, passed to every task.
        let computed = try #require(sbatch.range(of: "start_at=$(($(date +%s) + ${START_IN:-15}))"))
        let step = try #require(sbatch.range(of: "\nsrun "))
        #expect(computed.upperBound < step.lowerBound)
        #expect(sbatch.contains("--start-at \"$2\"") && sbatch.contains("\"$start_at\""))
        #expect(sbatch.contains("--run-id \"slurm-$SLURM_JOB_ID\""))
        #expect(sbatch.contains("--shard \"$((SLURM_PROCID + 1))/$SLURM_NTASKS\""))
        let workflow = try String(
            contentsOf: root.appendingPathComponent("Scenarios/k8s/github-actions-shards.yml"),
            encoding: .utf8
        )
        #expect(workflow.contains("--start-at \"${{ needs.plan.outputs.start-at }}\""))
        #expect(workflow.contains("if: always()\n        with:\n          name: shard-"), "a failed shard's record is uploaded")
        let manifest = try String(contentsOf: root.appendingPathComponent("Scenarios/k8s/fleet.yaml"), encoding: .utf8)
        #expect(manifest.contains("--start-at \"${START_AT}\""))
    }

    @Test("The GitHub Actions example passes GitHub's workflow schema")
    func githubActionsExample() async throws {
        let checked = try await Self.tool([
            "python3", "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows",
            "Scenarios/k8s/github-actions-shards.yml",
        ])
        #expect(checked.status == 0, "\(checked.output)\(checked.errors)")
    }
}
