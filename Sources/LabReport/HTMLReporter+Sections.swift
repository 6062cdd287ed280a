import Foundation
import Ink
import LabCharts
import LabCore
import LabResults
import Plot

// report.html's charts, and the sections it shares with report.md.
extension HTMLReporter {
    /// The charts report.md draws as files, inline.
    static func charts(_ result: RunResult) -> Node<HTML.BodyContext> {
        var figures: [(caption: String, chart: any Chart)] = [
            (
                "Exchanges per second by group, as measured (the tables' ops/s).",
                MarkdownReporter.throughputChart(result)
            )
        ]
        var folded: [Int: (summary: String, chart: any Chart)] = [:]
        for group in result.groups {
            guard let lead = MarkdownReporter.latencyChart(result, group, tips: true) else { continue }
            let label = MarkdownReporter.label(group.key)
            figures.append(("Latency by percentile: \(label): the exchange and its costliest steps.", lead))
            if let rest = MarkdownReporter.latencyChart(result, group, part: .rest, tips: true) {
                folded[figures.count - 1] = ("\(label): its other \(rest.curves.count) steps", rest)
            }
        }
        var notes: [String] = []
        if let intervals = result.intervals, let indices = intervals.indices {
            if indices.count < 3 {
                notes.append(
                    "No timeline: this run kept \(indices.count) interval\(indices.count == 1 ? "" : "s") of"
                        + " \(TimeSpan(nanoseconds: intervals.width)), too few to show a change over time."
                )
            } else if let timeline = MarkdownReporter.timelineChart(result) {
                figures.append(("Each group's exchanges by the interval they started in.", timeline))
            }
        }
        if let capacity = MarkdownReporter.capacityChart(Capacity.of(result)) {
            figures.append(("Throughput and latency against offered load.", capacity))
        }
        if let matrix = MatrixFigures.of(result) {
            figures.append(
                (
                    "\(matrix.metric) against \(MatrixFigures.short(matrix.parameter)).",
                    MarkdownReporter.matrixChart(matrix)
                )
            )
        }
        return .section(
            .id("charts"),
            .h2("Charts"),
            .forEach(notes) { .p(.class("note"), .text($0)) },
            .forEach(figures.indices) { index in
                .group(
                    Self.figure(figures[index].chart, caption: figures[index].caption),
                    .unwrap(folded[index]) { rest in
                        .element(
                            named: "details",
                            nodes: [
                                .attribute(named: "class", value: "more-steps"),
                                .element(named: "summary", nodes: [.text(rest.summary)]),
                                Self.figure(rest.chart, caption: nil),
                            ]
                        )
                    }
                )
            }
        )
    }

    /// A `figure` of `chart` (`chartBoxes`) and its caption.
    static func figure(_ chart: any Chart, caption: String?) -> Node<HTML.BodyContext> {
        .element(
            named: "figure",
            nodes: [
                .raw(Self.chartBoxes(chart)),
                .unwrap(caption) { .element(named: "figcaption", nodes: [.text($0)]) },
            ]
        )
    }

    /// `chart` twice, for the page to show the one that fits its width (`HTMLAssets.css`):
    /// drawn wide in a `div.chart.wide`, and narrow in a `div.chart-narrow` (its ids prefixed),
    /// so that its text keeps its size on a phone rather than shrinking with a wide drawing.
    static func chartBoxes(_ chart: any Chart) -> String {
        "<div class=\"chart wide\">\(Self.inline(chart.render(on: Frame())))</div>"
            + "<div class=\"chart-narrow\">\(Self.inline(chart.render(on: .phone)))</div>"
    }

    /// An SVG document as an element of the page: without its XML declaration.
    static func inline(_ svg: String) -> String {
        guard svg.hasPrefix("<?xml"), let end = svg.range(of: "?>") else { return svg }
        return String(svg[end.upperBound...]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The sections report.md has beyond its tables and charts, from its own Markdown:
    /// outcomes, capacity, matrix, bytes, packets, memory, CPU and calibration.
    static func markdownSections(_ result: RunResult) -> Node<HTML.BodyContext> {
        var lines = MarkdownReporter.summary(result)
        lines += MarkdownReporter.shards(result)
        lines += MarkdownReporter.outcomes(result)
        lines += MarkdownReporter.capacity(result, chart: nil)
        lines += MarkdownReporter.matrix(result, chart: nil)
        lines += MarkdownReporter.traffic(result)
        lines += MarkdownReporter.packets(result)
        lines += MarkdownReporter.memory(result)
        let parser = MarkdownParser()
        let html = parser.html(from: lines.joined(separator: "\n"))
        return .section(.id("details"), .h2("Details"), .div(.class("markdown"), .raw(Self.scrollingTables(html))))
    }

    /// Each `<table>` of Ink's output in a box that scrolls sideways on a narrow screen.
    static func scrollingTables(_ html: String) -> String {
        html.replacingOccurrences(of: "<table>", with: "<div class=\"scroll\"><table class=\"sortable\">")
            .replacingOccurrences(of: "</table>", with: "</table></div>")
    }
}
