import LabAnalysis
import LabCore
import LabResults

extension MarkdownReporter {
    /// `## Comparisons within the run`: one sentence per pair of groups that differ in one
    /// thing (`InRunComparison`), the slower side first, and what the sentences judge when the
    /// queue made the exchanges' time. report.html has the same with every step's table.
    static func comparisons(_ result: RunResult) -> [String] {
        let pairs = InRunComparison.pairs(result)
        guard !pairs.isEmpty else { return [] }
        var lines = ["## Comparisons within the run", ""]
        if let note = pairs.first?.basisNote {
            lines += ["**What is judged.** " + Self.prose(Self.capitalized(note)) + ".", ""]
        }
        for pair in pairs {
            guard let sentence = pair.sentence else { continue }
            lines.append("- " + Self.prose(sentence))
        }
        return lines + [""]
    }

    static func capitalized(_ text: String) -> String {
        text.prefix(1).uppercased() + text.dropFirst()
    }
}
