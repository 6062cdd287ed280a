import Foundation
import LabCore
import LabReport
import LabResults
import LabTestSupport
import Testing

/// report.html and the pages made from Markdown draw a verdict's mark (✅ ❌ ⚠️ 🔴 🟢) as an
/// inline SVG: Debian's Chromium without an emoji font shows those characters as boxes.
@Suite(.tier(.unit)) struct HTMLMarksTests {
    /// The code points a browser needs an emoji or symbol font for: Miscellaneous Symbols and
    /// Dingbats (U+2600–U+27BF), the arrows and shapes after them (U+2B00–U+2BFF), the emoji
    /// variation selector (U+FE0F), and every plane-1 pictograph (U+1F000 on).
    static func needsEmojiFont(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x2600...0x27BF, 0x2B00...0x2BFF, 0xFE0F, 0x1F000...: true
        default: false
        }
    }

    /// A run that missed a threshold and met another, was cut short by its deadline and
    /// saturated its generator.
    static func troubledRun() -> RunResult {
        var result = Fixture.result(stoppedByDeadline: true)
        result.cpu = RunCPU(
            process: ProcessCPU(userNanoseconds: 1_900_000_000, systemNanoseconds: 0, waitingNanoseconds: 0),
            wallNanoseconds: 1_000_000_000,
            cores: 2,
            iterations: 800,
            includesServer: true
        )
        return result
    }

    @Test("report.html has no character that needs an emoji font: its marks are SVGs with a label")
    func reportHasNoEmoji() throws {
        let result = Self.troubledRun()
        #expect(result.cpu?.warning != nil && result.thresholds.contains { $0.passed })
        // report.md keeps its emoji (GitHub and terminals show them) ...
        let markdown = try #require(MarkdownReporter(options: ReportOptions(charts: false)).render(result).first?.text)
        #expect(markdown.contains("✅") && markdown.contains("❌") && markdown.contains("⚠️"))
        // ... report.html, showing the same sections, draws them.
        let html = HTMLReporter(options: ReportOptions(charts: true)).render(result)
        let found = html.unicodeScalars.filter(Self.needsEmojiFont).map { "U+" + String($0.value, radix: 16) }
        #expect(found.isEmpty, "\(Set(found))")
        let mark = "<svg class=\"mark\" viewBox=\"0 0 16 16\" width=\"16\" height=\"16\" role=\"img\" aria-label="
        for label in ["fail", "warning"] {
            #expect(html.contains(mark + "\"\(label)\">"), "\(label)")
        }
        // A passing run's outcome.
        let passed = HTMLReporter(options: ReportOptions(charts: false)).render(Fixture.result(thresholds: false))
        #expect(passed.contains("aria-label=\"pass\">") && !passed.unicodeScalars.contains(where: Self.needsEmojiFont))
    }

    @Test("A page made from Markdown (comparison, check, sweep) draws every mark, in text only")
    func markdownPageHasNoEmoji() {
        let markdown = """
            # Check

            - 🔴 **2 slower**, 🟢 **1 faster**; ⚠️ not judged; ⚠ bare

            | step | verdict |
            |:--|:--|
            | sign | ✅ met |
            | verify | ❌ missed |
            """
        let page = MarkdownPage.html(markdown: markdown, title: "t", images: [:])
        #expect(!page.unicodeScalars.contains(where: Self.needsEmojiFont), "\(page)")
        for label in ["worse", "better", "warning", "pass", "fail"] {
            #expect(page.contains("aria-label=\"\(label)\""), "\(label)")
        }
        // The words beside the marks stay.
        #expect(page.contains("<strong>2 slower</strong>") && page.contains(" met</td>") && page.contains(" bare"))
    }
}
