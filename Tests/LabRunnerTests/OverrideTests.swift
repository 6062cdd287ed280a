import Foundation
import LabCore
import LabScenario
import LabTestSupport
import Testing

/// `lab run --set PATH=VALUE` and `"$schema"`: variants of a run without a file of their own.
@Suite(.tier(.unit)) struct OverrideTests {
    static func apply(_ arguments: [String], to json: String) throws -> [String: Any] {
        let overrides = try arguments.map { try #require(ScenarioOverride(argument: $0), "\($0)") }
        let data = try ScenarioOverride.apply(overrides, to: Data(json.utf8))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test("Paths: keys, indexes, bracketed keys with dots, an optional $.; malformed ones refused")
    func paths() throws {
        let parsed = try #require(ScenarioOverride(argument: #"$.flows[0].options["rsa.bits"]=2048"#))
        #expect(parsed.path == [.key("flows"), .index(0), .key("options"), .key("rsa.bits")])
        #expect(parsed.pathDescription == #"$.flows[0].options["rsa.bits"]"#)
        #expect(parsed.value == "2048")
        #expect(ScenarioOverride(argument: "a=b=c")?.value == "b=c", "the first = splits")
        for bad in ["noequals", "=1", "a..b=1", "a.=1", "a[x]=1", "a[-1]=1", "a[0=1", #"a[""]=1"#, "a.[0]=1"] {
            #expect(ScenarioOverride(argument: bad) == nil, "\(bad)")
        }
    }

    @Test("Values: JSON when they parse, text otherwise; null removes; missing objects are made")
    func values() throws {
        let base = #"{"name": "n", "load": {"iterations": 5}, "flows": [{"flow": "cx"}], "server": {"address": "h:1"}}"#
        let changed = try Self.apply(
            [
                "load.iterations=100", "name=variant", "flows[0].options={\"rsaBits\": 2048}", "clients.count=3",
                "server.address=null", "flows[1].flow=login", "report.charts=false",
            ],
            to: base
        )
        #expect((changed["load"] as? [String: Any])?["iterations"] as? Int == 100)
        #expect(changed["name"] as? String == "variant")
        let flows = changed["flows"] as? [[String: Any]] ?? []
        #expect((flows.first?["options"] as? [String: Any])?["rsaBits"] as? Int == 2048)
        #expect(flows.count == 2 && flows.last?["flow"] as? String == "login", "the array's length appends")
        #expect((changed["clients"] as? [String: Any])?["count"] as? Int == 3)
        #expect((changed["server"] as? [String: Any])?.keys.contains("address") == false)
        #expect((changed["report"] as? [String: Any])?["charts"] as? Bool == false)
    }

    @Test("An override that does not fit the document is refused, naming where")
    func misfits() throws {
        let base = #"{"name": "n", "flows": [{"flow": "cx", "options": {"sizes": [], "pair": [1, 2]}}]}"#
        for (argument, words) in [
            ("flows[5].suite=x", "$.flows[5]: no such flow; $.flows has 1 element (index 0), and [1] appends one"),
            ("flows[0].options.sizes[3]=1", "sizes[3]: no such size; $.flows[0].options.sizes has no elements, and [0]"),
            ("flows[0].options.pair[3]=1", "pair[3]: no such element; $.flows[0].options.pair has 2 elements (indexes 0…1)"),
            ("name.first=x", "$.name is not an object"),
            ("flows.first=x", "$.flows is not an object"),
        ] {
            let override = try #require(ScenarioOverride(argument: argument))
            #expect(throws: LabError.self, "\(argument)") {
                try ScenarioOverride.apply([override], to: Data(base.utf8))
            }
            do {
                _ = try ScenarioOverride.apply([override], to: Data(base.utf8))
            } catch let error as LabError {
                #expect(error.message.contains(words), "\(argument): \(error.message)")
            }
        }
    }

    @Test("JSON is held to RFC 8259: in a --set value that starts as JSON, and in the file it changes")
    func strictJSON() throws {
        #expect(throws: LabError.self) { try ScenarioOverride.parse(#"flows[0].options={"rsaBits": 2048,}"#) }
        do {
            _ = try ScenarioOverride.parse(#"flows[0].options={"rsaBits": 2048,}"#)
        } catch let error as LabError {
            #expect(
                error.message
                    == "--set flows[0].options: the value is not valid JSON: line 1, column 18: "
                    + "expected a key after ',', found '}' (JSON allows no comma before it)",
                "\(error.message)"
            )
        }
        for text in ["1.5.3", "NaN", "x25519", "2048,"] {
            let override = try ScenarioOverride.parse("a=\(text)")
            #expect(try Self.apply([override.argument], to: "{}")["a"] as? String == text, "\(text) is text")
        }
        // A file with a trailing comma stays as it is, for the decoder to name where it breaks.
        let lenient = Data(#"{"name": "n", "flows": [{"flow": "cx"},]}"#.utf8)
        let changed = try ScenarioOverride.apply([try ScenarioOverride.parse("name=m")], to: lenient)
        #expect(changed == lenient)
        let problems = Scenario.decode(changed).problems.map(\.description)
        #expect(problems == [#"$: not valid JSON: line 1, column 40: expected a value after ',', found ']' (JSON allows no comma before it)"#])
    }

    @Test("\"$schema\" is accepted as a string, and refused as anything else")
    func schemaKey() {
        let good = #"{"$schema": "../docs/scenario.schema.json", "name": "n", "flows": [{"flow": "cx"}]}"#
        #expect(Scenario.decode(Data(good.utf8)).problems.isEmpty)
        let bad = #"{"$schema": 5, "name": "n", "flows": [{"flow": "cx"}]}"#
        let problems = Scenario.decode(Data(bad.utf8)).problems
        #expect(problems.map(\.path) == [#"$["$schema"]"#], "\(problems)")
    }
}

/// `lab run --set` as a user runs it.
@Suite(.tier(.integration)) struct OverrideRunTests {
    @Test("--set changes the run, and a bad value is named by its JSON path before the run")
    func overridesReachTheRun() async throws {
        let out = try CLITests.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: out) }
        let run = try await CLITests.lab([
            "run", "Scenarios/quickstart.json", "--quiet", "--out", out.path, "--set", "clients.count=2", "--set",
            #"load={"model": "closed"}"#, "--set", "load.iterations=7", "--set", "load.warmupIterations=1",
            "--set", "flows[1]=null",
        ])
        #expect(run.status == 0, "\(run.errors)")
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: out.appendingPathComponent("results.json")))
                as? [String: Any]
        )
        #expect(document["completedIterations"] as? Int == 14, "2 clients × 7 iterations")
        let bad = try await CLITests.lab([
            "run", "Scenarios/quickstart.json", "--quiet", "--set", #"load={"model": "closed"}"#, "--set",
            "load.iterations=\"many\"",
        ])
        #expect(bad.status == 1, "\(bad.errors)")
        #expect(bad.errors.contains("$.load.iterations: expected"), "\(bad.errors)")
        let misfit = try await CLITests.lab([
            "run", "Scenarios/quickstart.json", "--quiet", "--set", "flows[99].suite=x",
        ])
        #expect(misfit.status == 1 && misfit.errors.contains("$.flows[99]: no such flow; $.flows has 6 elements"), "\(misfit.errors)")
        let malformed = try await CLITests.lab(["run", "Scenarios/quickstart.json", "--quiet", "--set", "a..b=1"])
        #expect(malformed.status == 1 && malformed.errors.contains("--set"), "\(malformed.errors)")
    }
}
