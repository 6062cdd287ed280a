import Foundation
import LabAnalysis
import LabCore
import LabReport
import LabResults
import LabRunner
import LabSwiftCrypto
import LabTestKit
import LabTestSupport
import SwiftCSV
import Testing

/// report.html as a person sees it: opened in headless Chromium (Debian's `chromium`, driven
/// over the DevTools protocol by Tests/Interop/browser.py), and its in-run comparisons
/// against `lab compare` of the same groups.
@Suite(.tier(.browser)) struct HTMLReportTests {
    /// Where the screenshots go, for a person to look at.
    static let screenshots = RepositoryPaths.root.appendingPathComponent("Reports/screenshots")

    /// Runs `browser.py ARGUMENTS` and decodes what it prints.
    static func browser(_ arguments: [String]) async throws -> [String: Any] {
        try await Browser.run(arguments)
    }

    /// The quickstart as shipped, run once for the suite's tests (in a temporary folder).
    static let quickstart = Task<URL, any Error> {
        let out = try CLITests.temporaryFolder().appendingPathComponent("quickstart")
        let run = try await CLITests.lab(["run", "Scenarios/quickstart.json", "--out", out.path, "--quiet"])
        // Exit 2, a threshold missed, writes every report all the same: its open load's p99
        // misses 50 ms when the live view's run beside it takes the cores the probe found.
        guard run.status == 0 || run.status == 2 else {
            throw LabError(.invalidScenario, "the quickstart failed: \(run.errors)")
        }
        return out
    }

    @Test(
        "report.html in Chromium: no console error, no request, every group's table with results.json's figures; screenshots at 1280 and 400 px"
    )
    func opensInChromium() async throws {
        let out = try await Self.quickstart.value
        let page = out.appendingPathComponent("report.html")
        let seen = try await Self.browser(["report", page.absoluteString, "--screenshots", Self.screenshots.path])
        #expect((seen["exceptions"] as? [Any])?.isEmpty == true, "\(seen["exceptions"] ?? "")")
        let console = (seen["console"] as? [[String: Any]]) ?? []
        #expect(
            console.filter { ["error", "warning", "assert"].contains($0["type"] as? String ?? "") }.isEmpty,
            "\(console)"
        )
        #expect((seen["requests"] as? [Any])?.isEmpty == true, "requests: \(seen["requests"] ?? "")")

        // Every client group of results.json, with its figures, as data-value.
        let result = try RunResult.read(from: out.appendingPathComponent("results.json"))
        let content = try #require(seen["page"] as? [String: Any])
        let groups = try #require(content["groups"] as? [[String: Any]])
        #expect(groups.count == result.groups.count)
        for group in result.groups {
            let shown = try #require(groups.first { $0["group"] as? String == group.key.description }, "\(group.key)")
            let table = try #require(shown["table"] as? [String: Any])
            let headings = try #require(table["headings"] as? [String])
            let rows = try #require(table["rows"] as? [[String: Any]])
            #expect(rows.compactMap { $0["step"] as? String } == group.orderedSteps.map(\.step.name))
            for (step, _) in group.orderedSteps {
                let statistics = try #require(result.statistics(group, step))
                let row = try #require(rows.first { $0["step"] as? String == step.name })
                let cells = try #require(row["cells"] as? [[String: Any]])
                func value(_ heading: String) -> Double? {
                    guard let index = headings.firstIndex(where: { $0 == heading || $0.hasPrefix(heading + " (") })
                    else { return nil }
                    return (cells[index]["value"] as? String).flatMap(Double.init)
                }
                #expect(value("Count") == Double(statistics.count), "\(group.key) \(step)")
                #expect(value("p50") == statistics.p50, "\(group.key) \(step)")
                #expect(value("p99") == statistics.p99, "\(group.key) \(step)")
                #expect(value("Max") == statistics.max, "\(group.key) \(step)")
                #expect(value("Mean") == statistics.mean, "\(group.key) \(step)")
                #expect(value("ops/s") == statistics.opsPerSecond, "\(group.key) \(step)")
            }
        }
        let thresholds = try #require(content["thresholds"] as? [[[String: Any]]])
        #expect(thresholds.count == result.thresholds.count)
        #expect((content["charts"] as? Int ?? 0) > result.groups.count, "a throughput chart and one per group at least")

        // The screenshots, and at a phone's width nothing wider than the screen but the
        // tables' own boxes.
        let shots = try #require(seen["screenshots"] as? [[String: Any]])
        #expect(shots.map { $0["width"] as? Int } == [1280, 400])
        for shot in shots {
            let path = try #require(shot["path"] as? String)
            let png = try Data(contentsOf: URL(fileURLWithPath: path))
            #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]), "\(path) is a PNG")
            // The PNG header's width, big-endian at byte 16.
            let width = png.count > 24 ? png[16..<20].reduce(0) { $0 << 8 | Int($1) } : 0
            #expect(width == shot["width"] as? Int, "\(path)")
            #expect(
                (shot["pageWidth"] as? Int ?? .max) <= (shot["width"] as? Int ?? 0),
                "the page is wider than \(shot)"
            )
        }
    }

    @Test(
        "report.html in Chromium: no table of times with two units, and no character that needs an emoji font"
    )
    func oneUnitPerTableAsRendered() async throws {
        let folder = try CLITests.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let out = try await Self.quickstart.value
        let seen = try await Self.browser([
            "report", out.appendingPathComponent("report.html").absoluteString, "--screenshots",
            folder.appendingPathComponent("shots").path, "--widths", "1280",
        ])
        let content = try #require(seen["page"] as? [String: Any])
        let units = try #require(content["units"] as? [String: Any])
        let tables = try #require(units["tables"] as? [[String: Any]])
        var timed = 0
        // Not tables of times: the Summary (a list of facts, no headings) and the thresholds (a
        // row per metric, each in its condition's unit).
        for table in tables where table["kind"] as? String != "thresholds" {
            let headings = table["headings"] as? [String] ?? []
            guard !headings.allSatisfy(\.isEmpty) else { continue }
            let named = table["named"] as? [String] ?? []
            let written = table["written"] as? [String] ?? []
            #expect(named.count <= 1, "a table names \(named): \(headings)")
            #expect(named.isEmpty ? written.count <= 1 : written.isEmpty, "cells in \(written) under \(headings)")
            if named.count == 1 { timed += 1 }
        }
        let result = try RunResult.read(from: out.appendingPathComponent("results.json"))
        #expect(timed >= result.groups.count, "a table of times per group at least: \(tables)")
        // The quickstart passes (a ✅): drawn, not a box (HTMLMarksTests has the warnings).
        #expect((units["emoji"] as? [String])?.isEmpty == true, "\(units["emoji"] ?? "")")
    }

    @Test(
        "Charts in Chromium at 1280 and 400 px: no title leaves its chart's box, no text under 10 px at 400 px (the quickstart, and fixtures with a timeline, stages and a matrix)"
    )
    func chartsFit() async throws {
        let folder = try CLITests.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        var pages = [("quickstart", try await Self.quickstart.value.appendingPathComponent("report.html"))]
        let fixtures = RepositoryPaths.root.appendingPathComponent("Tests/LabReportTests/Fixtures")
        for name in ["closed-cpu-intervals", "open-stages", "matrix"] {
            let result = try RunResult.read(from: fixtures.appendingPathComponent("\(name).json"))
            let out = folder.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
            pages.append((name, try HTMLReporter(options: ReportOptions(charts: true)).write(result, to: out)[0]))
        }
        for (name, page) in pages {
            let seen = try await Self.browser([
                "report", page.absoluteString, "--screenshots", folder.appendingPathComponent("shots-\(name)").path,
            ])
            let measured = try #require(seen["chartText"] as? [String: [String: Any]], "\(name)")
            for width in ["1280", "400"] {
                let text = try #require(measured[width], "\(name) at \(width) px")
                #expect((text["charts"] as? Int ?? 0) >= 2, "\(name) at \(width) px: \(text)")
                #expect((text["cut"] as? [Any])?.isEmpty == true, "\(name) at \(width) px, titles cut: \(text["cut"] ?? "")")
                #expect(
                    (text["outside"] as? [Any])?.isEmpty == true,
                    "\(name) at \(width) px, text outside its chart: \(text["outside"] ?? "")"
                )
            }
            let narrow = try #require(measured["400"])
            #expect((narrow["small"] as? [Any])?.isEmpty == true, "\(name) at 400 px, under 10 px: \(narrow["small"] ?? "")")
            #expect((narrow["smallest"] as? Double ?? 0) >= 10, "\(name) at 400 px: \(narrow)")
        }
    }

    @Test(
        "The quickstart's in-run comparison of x25519 on the two providers agrees with lab compare of the same groups"
    )
    func agreesWithCompare() async throws {
        let folder = try CLITests.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let out = try await Self.quickstart.value
        let result = try RunResult.read(from: out.appendingPathComponent("results.json"))
        let pairs = InRunComparison.pairs(result)
        let pair = try #require(
            pairs.first { $0.dimension == "provider" && $0.baseline.suite == "x25519" },
            "\(pairs.map { "\($0.baseline) / \($0.candidate)" })"
        )
        #expect(Set([pair.baselineValue, pair.candidateValue]) == ["swift-crypto", "openssl"])
        // The baseline is the faster of the two.
        #expect((pair.whole?.row.cells[0].p50Ratio ?? 0) >= 1)
        let compared = folder.appendingPathComponent("compare")
        let compare = try await CLITests.lab([
            "compare", out.path + "#{suite=x25519,provider=\(pair.baselineValue)}",
            out.path + "#{suite=x25519,provider=\(pair.candidateValue)}",
            "--out", compared.path, "--quiet",
        ])
        try #require(compare.status == 0, "\(compare.errors)")
        let csv = try CSV<Named>(url: compared.appendingPathComponent("comparison.csv"))
        let candidates = csv.rows.filter { $0["role"] == "candidate" }
        #expect(candidates.count == pair.comparison.rows.count, "\(csv.rows)")
        for row in pair.comparison.rows {
            let line = try #require(candidates.first { $0["step"] == row.step.name }, "\(row.step)")
            let cell = row.cells[0]
            #expect(line["verdict"] == cell.verdict.rawValue, "\(row.step): \(line)")
            let ratio = try #require(line["p50_ratio"].flatMap(Double.init))
            #expect(abs(ratio - (cell.p50Ratio ?? 0)) < 1e-3, "\(row.step): \(ratio) against \(cell.p50Ratio ?? 0)")
        }
        // lab compare's own report.html: its chart inside, nothing fetched, no error.
        let shown = try await Self.browser([
            "report", compared.appendingPathComponent("report.html").absoluteString, "--screenshots",
            folder.appendingPathComponent("shots").path, "--widths", "1280",
        ])
        #expect((shown["exceptions"] as? [Any])?.isEmpty == true && (shown["requests"] as? [Any])?.isEmpty == true, "\(shown)")
        #expect((shown["page"] as? [String: Any])?["charts"] as? Int == 1, "the comparison's chart, inline")
        // The report says the same, in the sentence a person reads.
        let html = try String(contentsOf: out.appendingPathComponent("report.html"), encoding: .utf8)
        let sentence = try #require(pair.sentence)
        #expect(html.contains(sentence.replacingOccurrences(of: "&", with: "&amp;")), "\(sentence)")
    }

    @Test("A provider slowed on purpose is found slower, significantly; the same provider unslowed is not")
    func slowedProviderIsSignificant() async throws {
        func run(slowed: Bool) async throws -> InRunComparison.Pair {
            var plan = try TestPlan.from(
                #"""
                {
                  "name": "slowed-provider",
                  "server": { "transport": "in-process", "provider": "swift-crypto" },
                  "clients": { "count": 2 },
                  "load": { "model": "closed", "iterations": 300, "warmupIterations": 10 },
                  "flows": [
                    { "flow": "cx", "name": "plain", "suite": "x25519", "provider": "swift-crypto" },
                    { "flow": "cx", "name": "slowed", "suite": "x25519", "provider": "swift-crypto" }
                  ],
                  "report": { "stepUsage": true }
                }
                """#
            )
            if slowed {
                // Its X25519 and Ed25519 done three times each: real work, in the timed steps.
                plan.flows[1].setup.clientProvider = FaultyProvider(
                    SwiftCryptoProvider(),
                    faults: [.x25519, .ed25519],
                    fault: .repeated(3)
                )
            }
            let result = try await Runner(plan: plan).run()
            let pairs = InRunComparison.pairs(result)
            try #require(pairs.count == 1, "\(pairs.map(\.dimension))")
            return pairs[0]
        }
        let slowed = try await run(slowed: true)
        // The slowed one is the faulty provider, and the candidate: the slower of the two.
        #expect(slowed.dimension == "provider" && slowed.candidateValue == "faulty-swift-crypto→swift-crypto")
        let whole = try #require(slowed.whole)
        // Two in-process clients keep both cores busy: the run is saturated, or near it, and
        // then its exchanges are judged on their work (`Comparison.Conditions`).
        #expect(whole.row.step == (slowed.comparison.conditions.basis == .work ? .work : .exchange))
        #expect(whole.row.cells[0].verdict == .slower, "\(slowed.sentence ?? "")")
        let estimate = try #require(whole.estimate)
        #expect(estimate.lower > 1 && estimate.ratio > 1.2, "\(estimate)")
        #expect(slowed.sentence?.hasPrefix("faulty-swift-crypto→swift-crypto ×") == true, "\(slowed.sentence ?? "")")

        let same = try await run(slowed: false)
        #expect(same.dimension == "flow", "the flow entries' names are all that differs")
        let control = try #require(same.whole)
        #expect(
            control.row.cells[0].verdict != .slower && control.row.cells[0].verdict != .faster,
            "\(same.sentence ?? "")"
        )
    }
}
