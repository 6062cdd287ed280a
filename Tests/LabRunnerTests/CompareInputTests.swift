import Foundation
import Histogram
import LabCore
import LabReport
import LabResults
import LabTestSupport
import Testing

/// `lab compare` and `lab list` as a user runs them: bad input exits 1 with a plain message.
@Suite(.tier(.integration)) struct CompareInputTests {
    /// A results.json of one `cx` group labelled `flow`, written into `folder`.
    static func results(flow: String, in folder: URL, name: String) throws -> String {
        var histogram = Histogram<UInt64>(numberOfSignificantValueDigits: .three)
        histogram.record(250_000)
        let group = GroupResult(
            key: GroupKey(flow: flow, suite: "x25519", provider: "swift-crypto", transport: "in-process"),
            flowKind: "cx",
            insecure: false,
            steps: [.exchange: histogram],
            iterations: 100
        )
        return try Self.write(Self.document([group], completed: 100), in: folder, name: name)
    }

    /// A run of `groups` as the lab writes one: in process, `completed` exchanges in 1 s.
    static func document(_ groups: [GroupResult], completed: Int) -> RunResult {
        RunResult(
            metadata: RunMetadata(
                scenario: "s",
                startedAt: Date(timeIntervalSince1970: 0),
                build: "release",
                machine: MachineInfo(hostname: "h", cpu: "c", cores: 2, memoryBytes: 1, os: "o", kernel: "k"),
                providers: [],
                transport: "in-process",
                clients: 1,
                load: "closed",
                command: ""
            ),
            scenarioText: "",
            groups: groups,
            measuredNanoseconds: 1_000_000_000,
            totalNanoseconds: 1_000_000_000,
            plannedIterations: completed,
            completedIterations: completed,
            warmupIterations: 0,
            stoppedByDeadline: false
        )
    }

    /// Writes `result` as results.json named `name` into `folder`; returns its path.
    static func write(_ result: RunResult, in folder: URL, name: String) throws -> String {
        let url = folder.appendingPathComponent(name)
        try result.jsonData().write(to: url)
        return url.path
    }

    @Test("lab compare of a missing run exits 1 with a plain message, not Foundation's error dump")
    func missingRun() async throws {
        let folder = try CLITests.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let base = try Self.results(flow: "cx", in: folder, name: "a.json")
        let missing = folder.appendingPathComponent("missing").path
        let outcome = try await CLITests.lab(["compare", base, missing, "--out", folder.path, "--quiet"])
        #expect(outcome.status == 1, "\(outcome.errors)")
        #expect(outcome.errors.contains("\(missing): cannot read the file: it does not exist"), "\(outcome.errors)")
        #expect(!outcome.errors.contains("NSCocoaErrorDomain"), "\(outcome.errors)")
    }

    @Test("lab compare of runs with no group in common exits 1, listing both sides' groups")
    func nothingCompared() async throws {
        let folder = try CLITests.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let base = try Self.results(flow: "cx", in: folder, name: "a.json")
        let other = try Self.results(flow: "cx-tuned", in: folder, name: "b.json")
        let outcome = try await CLITests.lab(["compare", base, other, "--out", folder.path])
        #expect(outcome.status == 1, "\(outcome.errors)")
        #expect(outcome.errors.contains("nothing to compare: 'b' has none of the baseline's groups"), "\(outcome.errors)")
        #expect(outcome.errors.contains("baseline 'a':\n    cx x25519 swift-crypto in-process"), "\(outcome.errors)")
        #expect(outcome.errors.contains("'b':\n    cx-tuned x25519 swift-crypto in-process"), "\(outcome.errors)")
        let same = try await CLITests.lab(["compare", base, base, "--out", folder.path, "--quiet"])
        #expect(same.status == 0, "\(same.errors)")
    }

    @Test("lab list names where the messaging service's settings go: a messaging flow's options")
    func listNamesTheOptions() async throws {
        let outcome = try await CLITests.lab(["list"])
        #expect(outcome.status == 0)
        #expect(outcome.output.contains("Messaging service (msg/1; in a messaging flow's \"options\""))
        #expect(!outcome.output.contains("scenario \"service\""))
    }

    /// `count` samples spread ±15% (log-normal) around `median` nanoseconds, from `seed`.
    static func timings(_ count: Int, median: Double, seed: UInt64) -> Histogram<UInt64> {
        var random = SplitMix64(state: seed)
        var histogram = Histogram<UInt64>(numberOfSignificantValueDigits: .three)
        for _ in 0..<count {
            let u = Double.random(in: 0.0001..<1, using: &random)
            let v = Double.random(in: 0.0001..<1, using: &random)
            histogram.record(UInt64(median * exp(0.15 * (-2 * log(u)).squareRoot() * cos(2 * .pi * v))))
        }
        return histogram
    }

    /// A results.json of x25519 on swift-crypto (exchange p50 about 300 µs) and on openssl
    /// (×`slower`), 1,000 samples each; its threads waited for a core `waiting` of the time.
    static func twoProviders(in folder: URL, name: String, slower: Double, waiting: Double = 0.003) throws -> String {
        func group(_ provider: String, _ scale: Double, seed: UInt64) -> GroupResult {
            GroupResult(
                key: GroupKey(flow: "cx-x25519-\(provider)", suite: "x25519", provider: provider, transport: "in-process"),
                flowKind: "cx",
                insecure: false,
                steps: [.exchange: Self.timings(1_000, median: 300_000 * scale, seed: seed)],
                iterations: 1_000
            )
        }
        var result = Self.document([group("swift-crypto", 1, seed: 1), group("openssl", slower, seed: 2)], completed: 2_000)
        result.cpu = RunCPU(
            process: ProcessCPU(
                userNanoseconds: 500_000_000,
                systemNanoseconds: 0,
                waitingNanoseconds: UInt64(waiting * 2e9)
            ),
            wallNanoseconds: 1_000_000_000,
            cores: 2,
            iterations: 2_000,
            includesServer: true
        )
        return try Self.write(result, in: folder, name: name)
    }

    @Test("lab compare R#{provider=a} R#{provider=b}: the slower provider named first, whichever comes first")
    func selectorSentenceEitherWay() async throws {
        let folder = try CLITests.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let run = try Self.twoProviders(in: folder, name: "r.json", slower: 1.77)
        func sentences(_ first: String, _ second: String, _ out: String) async throws -> [String] {
            let outcome = try await CLITests.lab([
                "compare", "\(run)#{provider=\(first)}", "\(run)#{provider=\(second)}", "--out", folder.path + "/" + out,
            ])
            #expect(outcome.status == 0, "\(outcome.errors)")
            return outcome.output.split(separator: "\n").map(String.init).filter { $0.contains(" slower than ") }
        }
        let forward = try await sentences("swift-crypto", "openssl", "f")
        let backward = try await sentences("openssl", "swift-crypto", "b")
        #expect(forward.count == 1 && forward == backward, "\(forward) / \(backward)")
        let line = forward.first ?? ""
        #expect(line.hasPrefix("  openssl ×1.7"), "\(line)")
        #expect(line.contains("slower than swift-crypto: cx x25519 in-process · exchange (p50)"), "\(line)")
    }

    @Test("lab compare --fail-on-slower of a run made beside a busy core exits 3: not judged, and says why")
    func changedMachineIsNotAPass() async throws {
        let folder = try CLITests.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let quiet = try Self.twoProviders(in: folder, name: "quiet.json", slower: 1.0)
        let busy = try Self.twoProviders(in: folder, name: "busy.json", slower: 1.5, waiting: 0.37)
        let outcome = try await CLITests.lab(["compare", quiet, busy, "--out", folder.path + "/c", "--fail-on-slower"])
        #expect(outcome.status == 3, "\(outcome.output) \(outcome.errors)")
        #expect(outcome.output.contains("NOT JUDGED: the machine changed"), "\(outcome.output)")
        let same = try await CLITests.lab(["compare", quiet, quiet, "--out", folder.path + "/d", "--fail-on-slower"])
        #expect(same.status == 0, "\(same.output)")
    }
}
