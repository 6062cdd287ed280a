public import Foundation
import LabAnalysis
import LabCharts
import LabCore
public import LabResults
import Plot

/// Writes `report.html`: the run in one self-contained file (inline SVG, CSS and a little
/// script; nothing fetched when it is opened), readable at 1280 px and at a phone's width, and
/// printable. Verdicts first (thresholds, errors with their messages, saturation), then the
/// in-run comparisons (`InRunComparison`), each flow's groups as sortable tables, the charts,
/// and the sections report.md has beyond its tables.
///
/// Every figure cell carries its number as `data-value` (nanoseconds, or the unit its column
/// names): the sort uses it, and a test reads it back against results.json.
public struct HTMLReporter: Reporter {
    /// `html`.
    public static let name = "html"
    /// The report's file name.
    public static let fileName = "report.html"

    /// Whether to draw the charts.
    public var charts: Bool

    /// An HTML reporter; `options.charts` turns the charts on or off.
    public init(options: ReportOptions) {
        self.charts = options.charts
    }

    /// Writes `report.html`.
    public func write(_ result: RunResult, to directory: URL) throws -> [URL] {
        let url = directory.appendingPathComponent(Self.fileName)
        try writeText(self.render(result), to: url)
        return [url]
    }

    /// The document.
    public func render(_ result: RunResult) -> String {
        let metadata = result.metadata
        var body: [Node<HTML.BodyContext>] = [
            .header(
                .h1(.text("\(metadata.scenario)"), .span(.class("sub"), .text(" — crypto-lab run"))),
                .unwrap(Self.nonEmpty(metadata.description)) { .p(.class("description"), .text($0)) }
            ),
            Self.verdicts(result),
        ]
        let pairs = InRunComparison.pairs(result)
        if !pairs.isEmpty { body.append(Self.comparisons(pairs)) }
        body.append(Self.flows(result))
        if self.charts { body.append(Self.charts(result)) }
        body.append(Self.markdownSections(result))
        if !result.scenarioText.isEmpty {
            body.append(
                .section(
                    .id("scenario"),
                    .h2("Scenario"),
                    .details(.summary("Scenario as run"), .pre(.code(.text(result.scenarioText))))
                )
            )
        }
        let page = HTML(
            .lang(.english),
            HTMLAssets.head(title: "\(metadata.scenario) — crypto-lab"),
            .body(.main(.group(body)), .script(.raw(HTMLAssets.script)))
        )
        // The Markdown's marks (✅, ⚠️ from its sections) as SVGs: no emoji font is needed.
        return HTMLMarks.drawn(in: page.render()) + "\n"
    }

    /// `text` as an attribute's value: Plot writes a value as it is given, and escapes only
    /// text. `&`, `<`, `>`, `"` and `'` as references, so that a name from a server or a
    /// results.json stays inside its quotes.
    static func attributeValue(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }

    static func nonEmpty(_ text: String) -> String? {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? nil : trimmed
    }

    // MARK: Verdicts

    /// Passed or failed, the thresholds, the errors with their first messages, and what makes
    /// the figures less than they seem (a deadline, a saturated generator).
    static func verdicts(_ result: RunResult) -> Node<HTML.BodyContext> {
        let missed = result.thresholds.filter { !$0.passed }
        let errors = result.errorCount
        var headline =
            result.thresholds.isEmpty
            ? "No thresholds" : "\(result.thresholds.count - missed.count) of \(result.thresholds.count) thresholds met"
        headline += errors == 0 ? ", no errors" : ", \(errors) failed iteration\(errors == 1 ? "" : "s")"
        var warnings: [String] = []
        let notWhole = MarkdownReporter.notWhole(result.metadata)
        if result.stoppedByDeadline {
            warnings.append("Cut short: the deadline stopped this run; the figures cover only what ran.")
        }
        if let warning = result.cpu?.warning { warnings.append("Generator saturated. \(warning)") }
        let passed = result.passed && errors == 0
        return .section(
            .id("verdicts"),
            .h2("Verdicts"),
            .unwrap(notWhole) {
                .p(.class("banner fail"), .attribute(named: "data-failed-shards", value: "true"), .text($0))
            },
            .p(
                .class("banner \(passed ? "pass" : "fail")"),
                .attribute(named: "data-passed", value: "\(passed)"),
                .text(headline)
            ),
            .forEach(warnings) { .p(.class("banner warn"), .text($0)) },
            .if(
                !result.thresholds.isEmpty,
                .div(
                    .class("scroll"),
                    .table(
                        .class("sortable"),
                        .attribute(named: "data-table", value: "thresholds"),
                        .thead(.tr(.th("Threshold"), .th("Condition"), .th("Measured"), .th("Result"))),
                        .tbody(
                            .forEach(result.thresholds) { outcome in
                                .tr(
                                    .class(outcome.passed ? "pass" : "fail"),
                                    .td(.code(.text(outcome.metric))),
                                    .td(.text(outcome.condition)),
                                    .td(
                                        .attribute(named: "data-value", value: outcome.value.map { "\($0)" } ?? ""),
                                        .text(outcome.observed)
                                    ),
                                    .td(.text(outcome.passed ? "met" : "missed"))
                                )
                            }
                        )
                    )
                )
            ),
            .if(
                errors > 0,
                .div(
                    .class("scroll"),
                    .table(
                        .attribute(named: "data-table", value: "errors"),
                        .thead(.tr(.th("Error"), .th("Count"), .th("First message"))),
                        .tbody(
                            .forEach(result.errorsByKind.sorted { $0.key < $1.key }) { kind, count in
                                .tr(
                                    .td(.code(.text(kind))),
                                    .td(
                                        .class("num"),
                                        .attribute(named: "data-value", value: "\(count)"),
                                        .text("\(count)")
                                    ),
                                    .td(.text(result.errorMessagesByKind[kind] ?? ""))
                                )
                            }
                        )
                    )
                )
            )
        )
    }
}
