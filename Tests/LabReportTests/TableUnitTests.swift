import Foundation
import LabAnalysis
import LabCore
import LabReport
import LabResults
import LabTestSupport
import Testing

/// One time unit per table (`TimeUnit`), in every report that prints times in tables, for a
/// run whose steps span nanoseconds to tens of milliseconds.
@Suite(.tier(.unit)) struct TableUnitTests {
    @Test("A table's unit is the largest in which its median p50 reads at least 1; decimals fixed for the table")
    func choice() {
        // A TCP run's steps: 3–48 µs of crypto, a 65 ms connect and exchange: µs, the median.
        #expect(TimeUnit.of([65_000_000, 5_000, 3_000, 48_000, 66_000_000]).name == "µs")
        #expect(TimeUnit.of([65_000_000, 5_000, 3_000, 48_000, 66_000_000]).format(65_372_159) == "65,372.16")
        // Mostly milliseconds: ms, and three decimals so that the 5 µs step reads 0.005.
        let ms = TimeUnit.of([65_000_000, 66_000_000, 5_000])
        #expect(ms.name == "ms" && ms.decimals == 3 && ms.format(5_000) == "0.005" && ms.heading("p50") == "p50 (ms)")
        #expect(TimeUnit.of([9_904_130, 10_027_010]).format(112_884_250) == "112.88")
        #expect(TimeUnit.of([500, 900, 1_200]).name == "ns")
        #expect(TimeUnit.of([500, 900]).format(1_234_567.8) == "1,234,568")
        #expect(TimeUnit.of([2e9, 3e9]).name == "s")
        #expect(TimeUnit.of([]).name == "µs" && TimeUnit.of([0, 0]).name == "µs")
    }

    @Test("report.md: each table of times names one unit in its headings, and no cell names one of its own")
    func markdownTables() throws {
        let result = Self.tcpRun()
        let report = try #require(MarkdownReporter(options: ReportOptions(charts: false)).render(result).first?.text)
        let tables = Self.markdownTables(report)
        try Self.expectOneUnit(tables, in: "report.md")
        // The TCP group: µs, its 65 ms connect in it with separators, its 0.9 µs keygen.session too.
        let tcp = try #require(
            tables.first { $0.rows.contains { $0.first == "connect" } && $0.headings.contains("Count") }
        )
        #expect(tcp.headings.contains("p50 (µs)") && tcp.headings.contains("Min (µs)"), "\(tcp.headings)")
        let connect = try #require(tcp.rows.first { $0.first == "connect" })
        #expect(connect[tcp.headings.firstIndex(of: "p50 (µs)") ?? 0].hasPrefix("65,"), "\(connect)")
        // The lockout group's table, all milliseconds, in ms.
        let lockout = try #require(tables.first { $0.rows.contains { $0.first == "kdf" } })
        #expect(lockout.headings.contains("p50 (ms)"), "\(lockout.headings)")
        // A step of one sample: its min, mean and max are that sample.
        let single = try #require(tcp.rows.first { $0.first == "keygen.server" })
        let columns = ["Min (µs)", "Mean (µs)", "Max (µs)"].compactMap { tcp.headings.firstIndex(of: $0) }
        let figures = columns.map { single[$0] }
        #expect(figures == ["248,873.75", "248,873.75", "248,873.75"], "\(single)")
    }

    @Test(
        "report.md and report.html of the lab's own documents: steps, preemption, capacity and matrix, one unit each",
        arguments: ResultsFixturesTests.current
    )
    func documents(name: String) throws {
        let result = try ResultsFixturesTests.read(name)
        let markdown = try #require(MarkdownReporter(options: ReportOptions(charts: false)).render(result).first?.text)
        try Self.expectOneUnit(Self.markdownTables(markdown), in: "\(name): report.md")
        let html = HTMLReporter(options: ReportOptions(charts: false)).render(result)
        try Self.expectOneUnit(Self.htmlTables(html), in: "\(name): report.html")
        if result.matrixMetric == "exchange.p50" {
            #expect(markdown.contains("## Matrix") && markdown.contains("| Series (µs) |"), "\(markdown)")
        }
        if result.stages != nil {
            #expect(markdown.contains("## Capacity") && markdown.contains("| Errors | p50 ("), "\(markdown)")
        }
    }

    @Test("report.html: each table of times names one unit; its cells keep nanoseconds as data-value")
    func htmlTables() throws {
        let result = Self.tcpRun()
        let html = HTMLReporter(options: ReportOptions(charts: false)).render(result)
        let tables = Self.htmlTables(html)
        #expect(tables.count > 4)
        try Self.expectOneUnit(tables, in: "report.html")
        let group = try #require(result.groups.first { $0.key.transport == "tcp" })
        let connect = try #require(result.statistics(group, .connect))
        #expect(html.contains("data-value=\"\(connect.p50)\""), "the raw nanoseconds, for sorting and tests")
        #expect(!html.contains("data-value=\"\(connect.p50 / 1000)\""))
    }

    @Test("comparison.md and the GitHub summary: each table of times in one unit")
    func otherMarkdownReports() throws {
        let base = Comparison.Run(label: "base", result: Self.tcpRun(seed: 1))
        let candidate = Comparison.Run(label: "candidate", result: Self.tcpRun(seed: 2))
        let comparison = ComparisonReport(Comparison(baseline: base, candidates: [candidate])).markdown()
        let tables = Self.markdownTables(comparison)
        try Self.expectOneUnit(tables, in: "comparison.md")
        #expect(tables.contains { $0.headings.contains("base p50 (µs)") && $0.headings.contains("candidate p50 (µs)") })

        let folder = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let written = try GitHubReporter(options: ReportOptions(charts: false)).write(Self.tcpRun(), to: folder)
        let summary = try String(contentsOf: try #require(written.first), encoding: .utf8)
        let summaryTables = Self.markdownTables(summary)
        try Self.expectOneUnit(summaryTables, in: "github-summary.md")
        #expect(summaryTables.contains { $0.headings.contains("p50 (ms)") }, "\(summary)")
    }

    // MARK: The run

    /// The fixture with its x25519 group made a TCP run's: a 65 ms connect and exchange beside
    /// steps of 0.9–48 µs, and a key generation of one sample in a coarse bucket.
    static func tcpRun(seed: UInt64 = 1) -> RunResult {
        var result = Fixture.result(seed: seed)
        var random = LCG(seed: seed + 100)
        let index = result.groups.firstIndex { $0.key.suite == "x25519" } ?? 0
        result.groups[index].key.transport = "tcp"
        let micro: [(Step, UInt64)] = [
            (.keygenSession, 900), (.encode, 3_000), (.decode, 2_500), (.wrap, 48_000), (.unwrap, 40_000),
            (.encrypt, 6_000), (.decrypt, 5_000), (.sign, 40_000), (.verify, 25_000),
        ]
        var steps = Dictionary(uniqueKeysWithValues: micro.map { ($0.0, random.histogram(count: 400, around: $0.1)) })
        steps[.connect] = random.histogram(count: 400, around: 65_000_000)
        steps[.exchange] = random.histogram(count: 400, around: 66_000_000)
        steps[.keygenServer] = Fixture.histogram([248_873_754])
        result.groups[index].steps = steps
        return result
    }

    // MARK: Reading tables

    /// A table as text: its headings and each row's cells.
    struct Table {
        var headings: [String]
        var rows: [[String]]
    }

    /// The time unit a heading names: `p50 (ms)` → `ms`.
    static func headingUnit(_ heading: String) -> String? {
        let units = ["ns", "µs", "ms", "s"]
        return units.first { heading.hasSuffix("(\($0))") }
    }

    /// The time units written after a number in `text`: `2.9 ms`, `50ms`, `1 s` (not `ops/s`
    /// or `3 steps`).
    static func cellUnits(_ text: String) -> Set<String> {
        var found: Set<String> = []
        let scalars = Array(text)
        for (index, character) in scalars.enumerated() where character.isNumber {
            var next = index + 1
            if next < scalars.count, scalars[next] == " " { next += 1 }
            for unit in ["ns", "µs", "us", "ms", "s"] {
                let end = next + unit.count
                guard end <= scalars.count, String(scalars[next..<end]) == unit else { continue }
                if end < scalars.count, scalars[end].isLetter || scalars[end] == "/" { continue }
                found.insert(unit == "us" ? "µs" : unit)
                break
            }
        }
        return found
    }

    /// Every table of times states one unit in its headings and none in its cells; tables
    /// without headings (report.md's Summary, a list of facts) and the thresholds table (a row
    /// per metric, each in its condition's unit) are not tables of times.
    static func expectOneUnit(_ tables: [Table], in report: String) throws {
        var timed = 0
        for table in tables where !table.headings.allSatisfy(\.isEmpty) && table.headings.first != "Metric"
            && table.headings.first != "Threshold" && table.headings.first != "threshold"
        {
            let named = Set(table.headings.compactMap(Self.headingUnit))
            let written = table.rows.reduce(into: Set<String>()) { units, row in
                for cell in row.dropFirst() { units.formUnion(Self.cellUnits(cell)) }
            }
            #expect(named.count <= 1, "\(report): a table names \(named.sorted()): \(table.headings)")
            #expect(
                named.isEmpty ? written.count <= 1 : written.isEmpty,
                "\(report): cells with units \(written.sorted()) in \(table.headings)"
            )
            if !named.isEmpty { timed += 1 }
        }
        #expect(timed > 0, "\(report) has tables of times")
    }

    /// report.md's tables: runs of lines that start with `|`, the second the alignment row.
    static func markdownTables(_ markdown: String) -> [Table] {
        var tables: [Table] = []
        var block: [String] = []
        func cells(_ line: String) -> [String] {
            line.trimmingCharacters(in: .whitespaces).dropFirst().dropLast()
                .components(separatedBy: " | ").map { $0.trimmingCharacters(in: .whitespaces) }
        }
        for line in markdown.components(separatedBy: "\n") + [""] {
            if line.hasPrefix("|") {
                block.append(line)
                continue
            }
            if block.count >= 2 {
                tables.append(Table(headings: cells(block[0]), rows: block.dropFirst(2).map(cells)))
            }
            block = []
        }
        return tables
    }

    /// report.html's tables: each `<th>` and `<td>`'s text, its tags taken out.
    static func htmlTables(_ html: String) -> [Table] {
        func texts(_ html: String, _ tag: String) -> [String] {
            let pattern = "<\(tag)(?:\\s[^>]*)?>(.*?)</\(tag)>"
            guard let expression = try? NSRegularExpression(pattern: pattern, options: [.dotMatchesLineSeparators])
            else { return [] }
            let range = NSRange(html.startIndex..., in: html)
            return expression.matches(in: html, range: range).compactMap { match in
                Range(match.range(at: 1), in: html).map { inner in
                    html[inner].replacingOccurrences(of: "<[^>]*>", with: "", options: .regularExpression)
                        .trimmingCharacters(in: .whitespacesAndNewlines)
                }
            }
        }
        return html.components(separatedBy: "<table").dropFirst().map { part in
            let table = part.components(separatedBy: "</table>").first ?? ""
            let rows = table.components(separatedBy: "<tr").dropFirst()
            return Table(
                headings: texts(table, "th"),
                rows: rows.map { texts($0, "td") }.filter { !$0.isEmpty }
            )
        }
    }
}
