import Foundation
import Histogram
import LabBuiltIns
import LabCore
import LabReport
import LabResults
import LabTestSupport
import Testing

/// What a hostile server (its error codes and messages, its serverStats strings) or a forged
/// results.json puts in a run, through every reporter: shown as text, never as markup, a link,
/// an image or a control sequence (docs/hardening.md, "Text from a peer").
@Suite(.tier(.unit)) struct HostileTextTests {
    /// Markup that runs or fetches in a browser, Markdown that links, fetches or breaks a
    /// table, and controls that act on a terminal (OSC title, CSI clear, the C1 CSI, a bidi
    /// override).
    static let payloads = [
        "<script>document.title='pwned'</script>",
        "<img src=x onerror=fetch('http://127.0.0.1:9/img')>",
        "<svg onload=fetch('http://127.0.0.1:9/svg')>",
        "](javascript:alert(1)) [link](javascript:alert(1)) ![i](http://127.0.0.1:9/md)",
        "a|b|c\n## Injected heading\r\n| x |",
        "\u{1B}]0;pwned-title\u{07}\u{1B}[2J",
        "\u{9B}31m\u{202E}txt.exe\u{2066}\u{7F}",
        "\"><img src=x onerror=alert(2)>'",
        "&lt;img src=x onerror=alert(3)&gt;",
    ]

    /// All of them in one string.
    static let all = payloads.joined(separator: " ")

    /// The fixture run with a payload in everything a server or a results.json can set: the
    /// machines, the providers, a client group's key, steps, error kinds and first messages, a
    /// server-side group as serverStats makes it, the thresholds, the provenance.
    static func hostileRun() -> RunResult {
        var result = Fixture.result()
        let p = Self.payloads
        var metadata = result.metadata
        metadata.scenario = p[0]
        metadata.description = Self.all
        metadata.build = p[1]
        metadata.machine.hostname = p[2]
        metadata.machine.cpu = p[3]
        metadata.machine.os = p[4]
        metadata.machine.kernel = p[5]
        metadata.providers.append(ProviderInfo(name: p[6], version: p[7]))
        metadata.transport = p[8]
        metadata.load = Self.all
        metadata.command = Self.all
        metadata.runId = Self.all
        metadata.tags = [p[0]: p[1], "k": Self.all]
        metadata.serverSide = "measured by the server (\(p[6]) \(p[7]) on \(p[2]))"
        metadata.serverMachine = MachineInfo(
            hostname: p[2],
            cpu: p[1],
            cores: 2,
            memoryBytes: 1 << 30,
            os: p[4],
            kernel: p[5]
        )
        metadata.counter = p[3]
        // A merge's shards, as their results.json and shard.json name them.
        metadata.failedShards = [FailedShard(shard: p[4], host: p[2], reason: Self.all)]
        metadata.shardWindows = [
            ShardWindow(
                shard: p[8],
                host: p[0],
                clientsStartedAt: nil,
                measuredFrom: metadata.startedAt,
                measuredTo: metadata.startedAt.addingTimeInterval(1),
                iterations: 1
            )
        ]
        result.metadata = metadata
        var random = LCG(seed: 7)
        // A client group whose errors are a rogue server's answers.
        var client = GroupResult(
            key: GroupKey(flow: "cx", suite: "x25519", provider: p[6], transport: "tcp"),
            flowKind: "cx",
            insecure: false,
            steps: [
                .exchange: random.histogram(count: 50, around: 90_000),
                Step(p[7]): random.histogram(count: 50, around: 9_000),
            ],
            errors: [p[1]: 3, p[5]: 2],
            iterations: 55,
            outcomes: [p[0]: 4]
        )
        client.errorMessages = [p[1]: "server error \(p[0]): \(Self.all)", p[5]: p[5] + p[3]]
        // The server's own steps, as its serverStats answer names them.
        let server = GroupResult(
            key: GroupKey(flow: p[2], suite: p[8], provider: p[6], transport: "tcp"),
            flowKind: GroupResult.serverSideKind,
            insecure: false,
            steps: [Step(p[3]): random.histogram(count: 50, around: 40_000)],
            errors: [p[0]: 1, p[4]: 1],
            iterations: 50
        )
        result.groups += [client, server]
        result.thresholds.append(
            ThresholdOutcome(metric: p[0], condition: p[3], observed: p[5] + p[1], passed: false)
        )
        return result
    }

    /// Every report of the run, by file name.
    static func reports(charts: Bool = true) throws -> [String: String] {
        let folder = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let written = try BuiltInPlugins.reporters.writeReports(
            Self.hostileRun(),
            formats: BuiltInPlugins.reporters.names,
            charts: charts,
            to: folder
        )
        var texts: [String: String] = [:]
        for url in written { texts[url.lastPathComponent] = try String(contentsOf: url, encoding: .utf8) }
        return texts
    }

    /// The scalars that act on a terminal or reorder text: C0 but line feed and tab, DEL, C1, bidi.
    static func controls(_ text: String) -> [String] {
        text.unicodeScalars.filter(MarkdownReporter.isShownAsCode).map { String($0.value, radix: 16) }
    }

    @Test(
        "No reporter writes a control character from a peer: ESC, BEL, CSI, DEL and bidi overrides are shown as codes"
    )
    func noControlsInAnyReport() throws {
        let reports = try Self.reports()
        #expect(reports.keys.contains("report.md") && reports.keys.contains("report.html"))
        #expect(reports.keys.contains("junit.xml") && reports.keys.contains("github-summary.md"))
        for (name, text) in reports {
            if name.hasSuffix(".json") {
                // JSON writes C0 as \u001b; the document reads back exactly what was sent.
                #expect(!text.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" }, "\(name)")
                continue
            }
            #expect(Self.controls(text).isEmpty, "\(name): \(Self.controls(text))")
        }
        let markdown = try #require(reports["report.md"])
        #expect(markdown.contains("U+001B&#93;0;pwned-titleU+0007U+001B&#91;2J"))
        #expect(markdown.contains("U+009B31mU+202Etxt.exeU+2066U+007F"))
        let csv = try #require(reports["results.csv"])
        #expect(csv.contains("\\u{009B}31m\\u{202E}txt.exe\\u{2066}\\u{007F}"), "\(csv)")
        // results.json keeps the data as sent.
        let json = try #require(reports["results.json"])
        let back = try RunResult.decode(Data(json.utf8))
        #expect(back.metadata.runId == Self.all)
        #expect(back.metadata.machine.kernel == Self.payloads[5])
    }

    @Test("report.md, github-summary.md: no tag, link, image or broken table from a peer's text")
    func markdownIsText() throws {
        let reports = try Self.reports()
        for name in ["report.md", "github-summary.md"] {
            let markdown = try #require(reports[name])
            // Inline code is shown as written (GitHub) or escaped (Ink): the rest is Markdown.
            let prose = Self.withoutCode(markdown)
            for tag in ["<script", "<img", "<svg", "<a ", "\"><"] {
                #expect(!prose.lowercased().contains(tag), "\(name) holds \(tag)")
            }
            #expect(!prose.contains("](javascript:") && !prose.contains("](http://127.0.0.1:9"), "\(name)")
            #expect(!markdown.contains("\n## Injected"), "\(name): a line break started a heading")
            #expect(markdown.contains("&lt;script&gt;document.title='pwned'&lt;/script&gt;"), "\(name)")
            // Every row of a table has as many cell borders as its header.
            var block: [String] = []
            for line in markdown.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) + [""] {
                if line.hasPrefix("|") {
                    block.append(line)
                    continue
                }
                if let header = block.first {
                    for row in block {
                        #expect(Self.borders(row) == Self.borders(header), "\(name): \(row)")
                    }
                }
                block = []
            }
        }
    }

    /// `markdown` without its inline code: each run of backticks to the next run as long.
    static func withoutCode(_ markdown: String) -> String {
        var out = ""
        var rest = Substring(markdown)
        while let start = rest.firstIndex(of: "`") {
            out += rest[..<start]
            let fence = rest[start...].prefix { $0 == "`" }
            let after = rest[fence.endIndex...]
            guard fence.count < 3, let end = after.range(of: String(fence)) else {
                out += fence
                rest = after
                continue
            }
            out += "CODE"
            rest = after[end.upperBound...].drop { $0 == "`" }
        }
        return out + rest
    }

    /// The pipes of a table row that are not escaped (`\|`).
    static func borders(_ row: String) -> Int {
        var count = 0
        var previous: Character = " "
        for character in row {
            if character == "|" && previous != "\\" { count += 1 }
            previous = previous == "\\" && character == "\\" ? " " : character
        }
        return count
    }

    @Test(
        "report.html: the page's one script, no tag, handler, link or image from a peer's text; attributes keep their quotes"
    )
    func htmlIsText() throws {
        let reports = try Self.reports()
        for name in ["report.html"] {
            let html = try #require(reports[name]).lowercased()
            #expect(html.components(separatedBy: "<script").count == 2, "the page's own script only")
            for tag in ["<img", "<svg onload", "<a ", "href=\"javascript", "src=\"http", "\"><img"] {
                #expect(!html.contains(tag), "\(name) holds \(tag)")
            }
            // Every payload is in the page as text, the Details section's (Ink's) included.
            let details = try #require(html.range(of: "<section id=\"details\"")).upperBound
            #expect(
                html[details...].contains("&lt;img src=x onerror=fetch("),
                "the Details section shows the error as text"
            )
            #expect(html.contains("data-step=\"&quot;&gt;&lt;img src=x onerror=alert(2)&gt;&#39;\""))
        }
        #expect(try #require(reports["junit.xml"]).contains("&lt;script&gt;"))
        #expect(!(try #require(reports["junit.xml"]).contains("<script")))
    }

    @Test("A merge's failed shard is named at the top of report.md and report.html, its host and reason as text")
    func failedShardsAreText() throws {
        let reports = try Self.reports()
        let markdown = try #require(reports["report.md"])
        let block = try #require(markdown.split(separator: "\n").first { $0.contains("This merge is not the whole run") })
        #expect(block.hasPrefix("> ❌ **This merge is not the whole run: shard a\\|b\\|c ## Injected heading"), "\(block)")
        #expect(block.contains("on &lt;svg onload=fetch("), "\(block)")
        let html = try #require(reports["report.html"])
        let verdicts = try #require(html.range(of: "data-failed-shards"))
        #expect(html[verdicts.upperBound...].prefix(300).contains("on &lt;svg onload=fetch("), "the banner shows the host as text")
    }

    @Test("GitHub annotations, printed on the run's output, carry no control")
    func annotationsArePrintable() throws {
        let lines = VerdictSuite(run: Self.hostileRun()).annotations()
        #expect(!lines.isEmpty)
        for line in lines { #expect(Self.controls(line).isEmpty, "\(line)") }
    }

    @Test("printable: every control as its code, text and line breaks as they are")
    func printableShowsControls() {
        #expect(MarkdownReporter.printable("a\u{1B}]0;t\u{07}b\nc\td") == "a\\u{001B}]0;t\\u{0007}b\nc\td")
        #expect(
            MarkdownReporter.printable("\u{9B}\u{7F}\u{202E}\u{2069}\r")
                == "\\u{009B}\\u{007F}\\u{202E}\\u{2069}\\u{000D}"
        )
        #expect(MarkdownReporter.printable("plain <b> ü 日本") == "plain <b> ü 日本")
    }
}
