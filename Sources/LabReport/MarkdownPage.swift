import Foundation
import Ink
public import LabCharts
import Plot

/// A Markdown report made one self-contained page, as report.html is: `lab compare`'s
/// comparison.md, `lab check`'s check.md, a sweep's sweep.md. Ink renders the Markdown; each
/// image whose file is among `images` is put inline (the SVG itself, so that nothing is
/// fetched when the page opens, drawn wide and narrow as report.html's charts are), tables
/// become sortable and scroll sideways in their box on a narrow screen, the style and script
/// are report.html's, and the marks of a verdict (✅, 🔴) are drawn (`HTMLMarks`).
public enum MarkdownPage {
    /// The file every such report is written as, beside its Markdown.
    public static let fileName = "report.html"

    /// The page for `markdown`, titled `title`; `images` maps an image's file name, as the
    /// Markdown links it, to its chart.
    public static func html(markdown: String, title: String, images: [String: any Chart]) -> String {
        var body = HTMLReporter.scrollingTables(MarkdownParser().html(from: markdown))
        for (name, chart) in images {
            body = Self.inline(name, chart, in: body)
        }
        let page = HTML(
            .lang(.english),
            HTMLAssets.head(title: title),
            .body(.main(.div(.class("markdown"), .raw(body))), .script(.raw(HTMLAssets.script)))
        )
        return HTMLMarks.drawn(in: page.render()) + "\n"
    }

    /// `html` with every `<img src="name" …>` replaced by the chart itself.
    static func inline(_ name: String, _ chart: any Chart, in html: String) -> String {
        var result = ""
        var rest = Substring(html)
        let marker = "<img src=\"\(name)\""
        while let start = rest.range(of: marker), let end = rest[start.upperBound...].firstIndex(of: ">") {
            result += rest[..<start.lowerBound]
            result += HTMLReporter.chartBoxes(chart)
            rest = rest[rest.index(after: end)...]
        }
        return result + rest
    }
}
