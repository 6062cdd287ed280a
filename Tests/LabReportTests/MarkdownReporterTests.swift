import Foundation
import LabCore
import LabReport
import LabResults
import LabTestSupport
import Testing

#if canImport(FoundationXML)
import FoundationXML
#endif

@Suite(.tier(.unit)) struct MarkdownReporterTests {
    /// Summary rows whose values depend on when and where a run happened.
    static let volatileRows = ["Started", "Duration", "Host", "CPU", "Cores", "Memory", "OS", "Kernel"]

    /// `report` with the volatile summary values replaced by `<masked>`.
    static func masked(_ report: String) -> String {
        report.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            for row in Self.volatileRows where line.hasPrefix("| \(row) | ") { return "| \(row) | <masked> |" }
            return String(line)
        }.joined(separator: "\n")
    }

    /// Writes the markdown report for `result` into a fresh folder; returns the folder and the files.
    static func write(_ result: RunResult, charts: Bool = true) throws -> (URL, [URL]) {
        let directory = try temporaryDirectory()
        return (directory, try MarkdownReporter(options: ReportOptions(charts: charts)).write(result, to: directory))
    }

    /// The text of `report.md` in `directory`.
    static func report(in directory: URL) throws -> String {
        try String(contentsOf: directory.appendingPathComponent("report.md"), encoding: .utf8)
    }

    /// The targets of the Markdown image links in `text`.
    static func imageLinks(_ text: String) -> [String] {
        text.matches(of: /!\[(?:[^\]\\]|\\.)*\]\(([^)\s]+)\)/).map { String($0.output.1) }
    }

    @Test func matchesItsSnapshot() throws {
        let (directory, _) = try Self.write(Fixture.result())
        defer { try? FileManager.default.removeItem(at: directory) }
        try expectSnapshot(Self.masked(try Self.report(in: directory)), named: "report.md")
    }

    @Test func summaryShowsTheRunsFacts() throws {
        let (directory, _) = try Self.write(Fixture.result())
        defer { try? FileManager.default.removeItem(at: directory) }
        let report = try Self.report(in: directory)
        #expect(
            report.hasPrefix("# report-fixture — crypto-lab run\n\nTwo cx suites side by side, and a lockout policy.\n")
        )
        for line in [
            "| Started | 2026-01-01 00:00:00 UTC |",
            "| Duration | 2.5 s total, 2 s measured |",
            "| Host | lab-host |",
            "| Memory | 8.0 GiB |",
            "| Providers | swift-crypto (swift-crypto 4.5.2), openssl (OpenSSL 3.0.17) |",
            "| Iterations | 800 of 800 planned, plus 80 warm-up |",
            "| Errors | 3 (signatureInvalid 2, decryptFailed 1) |",
            "| Deadline | not reached |",
            "| `errors` | == 0 | 3 | ❌ missed |",
            "| `cx.exchange.p99` | &lt; 50 ms | 2.9 ms | ✅ met |",
        ] {
            #expect(report.contains("\n" + line + "\n"), "missing line: \(line)")
        }
        #expect(!report.contains("Cut short"))
        let sections = report.split(separator: "\n").filter { $0.hasPrefix("## ") }
        #expect(
            sections == ["## Summary", "## Thresholds", "## Flow cx", "## Flow lockout", "## Charts", "## Scenario"]
        )
    }

    @Test func marksOnlyTheInsecureGroup() throws {
        let report = try #require(MarkdownReporter().render(Fixture.result()).first?.text)
        let groups = report.components(separatedBy: "\n### ")
        let classic = try #require(groups.first { $0.hasPrefix("classic · openssl") })
        let x25519 = try #require(groups.first { $0.hasPrefix("x25519 · swift-crypto") })
        #expect(classic.contains("⚠️ insecure (kept for fidelity only)"))
        #expect(!x25519.contains("insecure"))
        #expect(report.components(separatedBy: "kept for fidelity only").count == 2)
    }

    @Test func warnsWhenTheDeadlineCutTheRunShort() throws {
        let report = try #require(MarkdownReporter().render(Fixture.result(stoppedByDeadline: true)).first?.text)
        let lines = report.split(separator: "\n", omittingEmptySubsequences: false)
        // The warning comes before the summary, right after the title and description.
        let warning = try #require(lines.firstIndex { $0.hasPrefix("> ⚠️ **Cut short") })
        #expect(warning < (lines.firstIndex(of: "## Summary") ?? 0))
        #expect(lines[warning].contains("517 of 800 planned"))
        #expect(report.contains("| Deadline | ⚠️ **stopped the run early** |"))
        #expect(report.contains("| Outcome | ❌ failed (1 of 2 thresholds missed) |"))
    }

    @Test func saysWhenThereAreNoThresholds() throws {
        let report = try #require(MarkdownReporter().render(Fixture.result(thresholds: false)).first?.text)
        #expect(report.contains("## Thresholds\n\nNo thresholds.\n"))
        #expect(report.contains("| Outcome | ✅ passed |"))
    }

    @Test func chartsAreWellFormedAndEveryLinkResolves() throws {
        let result = Fixture.result()
        let (directory, files) = try Self.write(result)
        defer { try? FileManager.default.removeItem(at: directory) }
        let svgs = files.filter { $0.pathExtension == "svg" }
        // Throughput, a latency chart per group, and the seven-step group's other steps.
        #expect(svgs.count == result.groups.count + 2)
        #expect(svgs.map(\.lastPathComponent).contains("throughput.svg"))
        #expect(svgs.map(\.lastPathComponent).contains("latency-cx-x25519-swift-crypto-other-steps.svg"))
        #expect(svgs.map(\.lastPathComponent).contains("latency-cx-x25519-swift-crypto.svg"))
        for svg in svgs {
            let parser = XMLParser(data: try Data(contentsOf: svg))
            #expect(
                parser.parse(),
                "\(svg.lastPathComponent) is not well-formed: \(String(describing: parser.parserError))"
            )
            #expect(svg.lastPathComponent.wholeMatch(of: /[a-z0-9-]+\.svg/) != nil)
        }
        let links = Self.imageLinks(try Self.report(in: directory))
        #expect(Set(links) == Set(svgs.map(\.lastPathComponent)))
        #expect(links.count == svgs.count)
        for link in links {
            #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent(link).path), "\(link)")
        }
    }

    @Test func chartsEscapeTextAndGetDistinctNames() throws {
        let histogram = Fixture.histogram([1_000, 2_000, 3_000])
        func group(_ suite: String, _ provider: String, _ transport: String) -> GroupResult {
            GroupResult(
                key: GroupKey(flow: "cx", suite: suite, provider: provider, transport: transport),
                flowKind: "cx",
                insecure: false,
                steps: [.exchange: histogram, Step("<odd & \"step\">"): histogram]
            )
        }
        var result = Fixture.result()
        result.groups = [
            group("a b", "p", "tcp"), group("a-b", "p", "tcp"), group("a b", "p", "in-process"),
            group("x", "client→server", "tcp"),
        ]
        let (directory, files) = try Self.write(result)
        defer { try? FileManager.default.removeItem(at: directory) }
        let names = files.filter { $0.pathExtension == "svg" }.map(\.lastPathComponent)
        #expect(Set(names).count == names.count)
        #expect(names.count == 5)
        #expect(names.contains("latency-cx-x-client-server.svg"))
        for file in files where file.pathExtension == "svg" {
            let parser = XMLParser(data: try Data(contentsOf: file))
            #expect(parser.parse(), "\(file.lastPathComponent): \(String(describing: parser.parserError))")
        }
        let links = Self.imageLinks(try Self.report(in: directory))
        #expect(Set(links) == Set(names))
    }

    @Test func withoutChartsWritesNoSVG() throws {
        let (directory, files) = try Self.write(Fixture.result(), charts: false)
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(files.map(\.lastPathComponent) == ["report.md"])
        let contents = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(contents == ["report.md"])
        let report = try Self.report(in: directory)
        #expect(!report.contains("## Charts"))
        #expect(Self.imageLinks(report).isEmpty)
    }
}

/// The lines under a group's table that explain its times: preemption, CPU time, counts.
@Suite(.tier(.unit)) struct StepDetailReportTests {
    @Test("A run that read no step's usage (report.stepUsage off) gets no preemption table")
    func noTableWithoutUsage() throws {
        var result = Fixture.result()
        var detail = StepDetail()
        for _ in 0..<10 { detail.record(StepSample(nanoseconds: 100_000, watched: false)) }
        result.groups[0].details[.wrap] = detail
        let report = MarkdownReporter(options: ReportOptions(charts: false)).render(result).first { $0.name == "report.md" }?.text ?? ""
        #expect(!report.contains("Beside the time"), "\(report)")
        #expect(!report.contains("| wrap | 0.0% of 0 |"))
    }

    @Test("report.md gives each step's preempted share, its percentiles without those samples, and CPU time")
    func preemptedShareAndPercentilesWithout() throws {
        var result = Fixture.result()
        var detail = StepDetail()
        // 99 samples of 100 µs on the CPU, and one of 4.1 ms whose thread was switched out.
        for _ in 0..<99 { detail.record(StepSample(nanoseconds: 100_000, cpuNanoseconds: 98_000)) }
        detail.record(StepSample(nanoseconds: 4_100_000, cpuNanoseconds: 101_000, preempted: true))
        result.groups[0].details[.wrap] = detail
        let report = MarkdownReporter(options: ReportOptions(charts: false)).render(result).first { $0.name == "report.md" }?.text ?? ""
        let row = report.split(separator: "\n").first { $0.hasPrefix("| wrap | 1.0% of 100 |") }
        // p50, p99 and p99.9 of the 99 unpreempted samples; the CPU time's p50 and p99, in the
        // group's unit (classic's table is in ms: its 15 ms key generation, its 31 µs wrap).
        // (HDR histograms of three significant digits: 98 µs reads as its bucket's top, 98.05.)
        #expect(row == "| wrap | 1.0% of 100 | 0.100 | 0.100 | 0.100 | 0.098 | 0.098 |", "\(row ?? "no row")")
        #expect(
            report.contains("| Step | Preempted | p50 (ms) | p99 (ms) | p99.9 (ms) | CPU p50 (ms) | CPU p99 (ms) |")
        )
        #expect(report.contains("Beside the time: the share of samples preempted (the step's thread switched out"))
        // A group without details (here the lockout flow's) gets no such table.
        #expect(report.components(separatedBy: "Beside the time").count == 2)
        #expect(!report.contains("interrupt"), "an older document does not say whether interrupts were counted")

        // Whether interrupts were counted is said, either way.
        result.metadata.interruptsCounted = true
        let counted = MarkdownReporter(options: ReportOptions(charts: false)).render(result).first { $0.name == "report.md" }?.text ?? ""
        #expect(counted.contains("switched out, took an interrupt (the scheduler's tick, a device's), or off its CPU"))
        result.metadata.interruptsCounted = false
        let uncounted = MarkdownReporter(options: ReportOptions(charts: false)).render(result).first { $0.name == "report.md" }?.text ?? ""
        #expect(uncounted.contains("Interrupts were not counted (reading the kernel's tracepoints needs root)"))
    }

    @Test("report.md lists a counted run's median instructions per step")
    func countedTable() throws {
        var result = Fixture.result()
        result.metadata.counter = "instructions (callgrind, valgrind-3.19.0)"
        var detail = StepDetail()
        for count: UInt64 in [2_575_297, 2_575_297, 2_575_303, 2_576_731] {
            detail.record(StepSample(nanoseconds: 50_000, instructions: count, allocations: 6))
        }
        let x25519 = try #require(result.groups.firstIndex { $0.key.suite == "x25519" })
        result.groups[x25519].details[.verify] = detail
        let report = MarkdownReporter(options: ReportOptions(charts: false)).render(result).first { $0.name == "report.md" }?.text ?? ""
        #expect(report.contains("Counted by instructions (callgrind, valgrind-3.19.0), per sample"))
        #expect(report.contains("| verify | 4 | 2,575,297 | 2,575,297 | 2,576,731 | 0.06% | 6 |"), "\(report)")
    }
}
