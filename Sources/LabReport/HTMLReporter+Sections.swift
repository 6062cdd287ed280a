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
        var figures: [(caption: String, svg: String)] = [
            (
                "Exchanges per second by group, as measured (the tables' ops/s).",
                MarkdownReporter.throughputChart(result).render()
            )
        ]
        for group in result.groups {
            figures.append(
                (
                    "Latency by percentile: \(MarkdownReporter.label(group.key)).",
                    MarkdownReporter.latencyChart(result, group, tips: true).render()
                )
            )
        }
        var notes: [String] = []
        if let intervals = result.intervals, let indices = intervals.indices {
            if indices.count < 3 {
                notes.append(
                    "No timeline: this run kept \(indices.count) interval\(indices.count == 1 ? "" : "s") of"
                        + " \(TimeSpan(nanoseconds: intervals.width)), too few to show a change over time."
                )
            } else if let timeline = MarkdownReporter.timelineChart(result) {
                figures.append(("Each group's exchanges by the interval they started in.", timeline.render()))
            }
        }
        if let capacity = MarkdownReporter.capacityChart(Capacity.of(result)) {
            figures.append(("Throughput and latency against offered load.", capacity.render()))
        }
        if let matrix = MatrixFigures.of(result) {
            figures.append(
                (
                    "\(matrix.metric) against \(MatrixFigures.short(matrix.parameter)).",
                    MarkdownReporter.matrixChart(matrix).render()
                )
            )
        }
        return .section(
            .id("charts"),
            .h2("Charts"),
            .forEach(notes) { .p(.class("note"), .text($0)) },
            .forEach(figures) { figure in
                .element(
                    named: "figure",
                    nodes: [
                        .div(.class("chart"), .raw(Self.inline(figure.svg))),
                        .element(named: "figcaption", nodes: [.text(figure.caption)]),
                    ]
                )
            }
        )
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
