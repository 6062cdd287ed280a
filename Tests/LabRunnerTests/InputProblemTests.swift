import Foundation
import LabBuiltIns
import LabCore
import LabKit
import LabRunner
import LabScenario
import LabTestSupport
import Testing

/// Bad input is named for what it is: a file that cannot be read and why, a `--set` that does
/// not parse or made the problem, an outcome no flow counts.
@Suite(.tier(.unit)) struct InputProblemTests {
    /// A fresh temporary folder.
    static func folder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("input-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test("A file that cannot be read says why: it does not exist, or it is a folder")
    func unreadableFiles() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let missing = folder.appendingPathComponent("missing.json").path
        let error = try #require(throws: LabError.self) { try InputFile.read(missing) }
        #expect(error.code == .unreadableFile)
        #expect(error.message == "\(missing): cannot read the file: it does not exist")
        let folderError = try #require(throws: LabError.self) { try InputFile.read(folder.path) }
        #expect(folderError.message.hasSuffix("cannot read the file: it is a folder"))
        guard case .failure(let errors) = ScenarioValidator.validate(file: folder.path, plugins: BuiltInPlugins.all)
        else {
            Issue.record("a folder validated")
            return
        }
        #expect(errors.problems.map(\.description) == ["$: cannot read the file: it is a folder"])
    }

    @Test("--set without '=' or with a bad path says what is wrong")
    func setArguments() throws {
        let noEquals = try #require(throws: LabError.self) { try ScenarioOverride.parse("load.iterations") }
        #expect(noEquals.message.contains("there is no '='"), "\(noEquals.message)")
        let badPath = try #require(throws: LabError.self) { try ScenarioOverride.parse("a..b=1") }
        #expect(badPath.message.contains("the path 'a..b' does not parse"), "\(badPath.message)")
        #expect(ScenarioOverride(argument: "flows[0].suite=pq")?.argument == "flows[0].suite=pq")
    }

    @Test("A misspelled --set path is blamed on --set, not on the scenario file")
    func setProblemsBlameSet() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("s.json")
        try Data(#"{"name": "s", "flows": [{"flow": "cx"}], "load": {"iterations": 2}}"#.utf8).write(to: file)
        let override = try ScenarioOverride.parse("load.iteratons=5")
        let error = try #require(throws: LabError.self) {
            try BuiltInPlugins.catalog.plan(file: file.path, overrides: [override])
        }
        #expect(error.message.hasPrefix("\(file.path) with --set load.iteratons=5 has 1 problem:"), "\(error.message)")
        #expect(error.message.contains("$.load.iteratons: unknown key"), "\(error.message)")
        #expect(error.message.hasSuffix("(set by --set load.iteratons=5, not in the file)"), "\(error.message)")
    }

    @Test("An outcome threshold is checked against its flows' outcomes, as a step is against their steps")
    func outcomeNames() {
        func problems(_ thresholds: String, transport: String = "in-process") -> [String] {
            let json = """
                {"name": "o", "server": {"transport": "\(transport)"},
                 "flows": [{"flow": "lockout", "options": {"kdf": "sha512-salted"}}, {"flow": "cx"}],
                 "thresholds": \(thresholds)}
                """
            switch ScenarioValidator.validate(data: Data(json.utf8), plugins: BuiltInPlugins.all) {
            case .success: return []
            case .failure(let errors): return errors.problems.map(\.description)
            }
        }
        #expect(problems(#"{"lockout.outcomes.locked": "== 0", "outcomes.attempts": ">= 1"}"#) == [])
        #expect(
            problems(#"{"lockout.outcomes.lockd": "== 0"}"#) == [
                #"$.thresholds["lockout.outcomes.lockd"]: flow 'lockout' counts no outcome 'lockd'; the outcomes are 'attempts', 'postponed', 'locked', 'neverLocked', 'neverActed', 'recovered', 'refused', 'captchaRenewed'"#
            ]
        )
        #expect(problems(#"{"outcomes.lockd": "== 0"}"#).count == 1)
        #expect(problems(#"{"cx.outcomes.locked": "== 0"}"#).first?.contains("flow 'cx' counts no outcome 'locked'; it counts none") == true)
        // Over TLS every connection counts its handshake's `tls.` outcomes.
        #expect(problems(#"{"cx.outcomes.tls.version.1.3": ">= 1"}"#, transport: "tls") == [])
    }

    @Test("A threshold may name p95, as every table shows it")
    func p95Threshold() throws {
        let plan = try TestPlan.from(
            #"{"name": "p", "flows": [{"flow": "cx"}], "thresholds": {"cx.exchange.p95": "< 50 ms"}}"#
        )
        #expect(plan.thresholds.map(\.metric) == ["cx.exchange.p95"])
        #expect(plan.thresholds.first?.measure == .step(.exchange, .p95))
    }
}
