import Foundation
import Histogram
import LabCore
import LabReport
import LabResults
import LabTesting
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
        let result = RunResult(
            metadata: RunMetadata(
                scenario: "s",
                startedAt: Date(timeIntervalSince1970: 0),
                build: "debug",
                machine: MachineInfo(hostname: "h", cpu: "c", cores: 2, memoryBytes: 1, os: "o", kernel: "k"),
                providers: [],
                transport: "in-process",
                clients: 1,
                load: "closed",
                command: ""
            ),
            scenarioText: "",
            groups: [group],
            measuredNanoseconds: 1_000_000_000,
            totalNanoseconds: 1_000_000_000,
            plannedIterations: 100,
            completedIterations: 100,
            warmupIterations: 0,
            stoppedByDeadline: false
        )
        let url = folder.appendingPathComponent(name)
        try ResultsDocument(result).encoded().write(to: url)
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
}
