import Foundation
import LabTestSupport
import Testing

/// What `lab` tells a new user: the files its help names, what `lab list` gives each flow,
/// and the command a mistyped one meant.
@Suite(.tier(.integration)) struct CLIHelpTests {
    @Test("lab --help, lab help run and lab help compare name report.html, the file to open, first")
    func helpNamesTheHTMLReport() async throws {
        for arguments in [["--help"], ["help", "run"], ["help", "compare"]] {
            let help = try await CLITests.lab(arguments)
            #expect(help.status == 0, "\(arguments): \(help.errors)")
            // The help wraps its lines: compare with the whitespace collapsed.
            let text = help.output.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            let html = try #require(text.range(of: "report.html"), "\(arguments): \(text)")
            let other = arguments.last == "compare" ? "comparison.md" : "results.csv"
            let next = try #require(text.range(of: other), "\(arguments): \(text)")
            #expect(html.lowerBound < next.lowerBound, "\(arguments): report.html first: \(text)")
        }
    }

    @Test("lab list gives each flow its steps and its outcomes, as docs/scenarios.md says")
    func listGivesStepsAndOutcomes() async throws {
        let listed = try await CLITests.lab(["list"])
        #expect(listed.status == 0, "\(listed.errors)")
        let lines = listed.output.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        let guess = try #require(lines.firstIndex { $0.hasPrefix("captcha-guess ") }, "\(listed.output)")
        #expect(lines[guess + 1] == "steps: captcha, login, kdf", "\(lines[guess + 1])")
        #expect(lines[guess + 2] == "outcomes: guessed, missed", "\(lines[guess + 2])")
        let cx = try #require(lines.firstIndex { $0.hasPrefix("cx ") }, "\(listed.output)")
        #expect(lines[cx + 1].hasPrefix("steps: keygen.client,"), "\(lines[cx + 1])")
        #expect(listed.output.contains("exchange\n") && listed.output.contains("outcomes: none"), "\(listed.output)")
    }

    @Test("A mistyped command is told the nearest one: lab runn x.json → did you mean 'run'?")
    func mistypedCommand() async throws {
        let typo = try await CLITests.lab(["runn", "x.json"])
        #expect(typo.status == 1, "\(typo.errors)")
        #expect(typo.errors.contains("'runn' is not a lab command (did you mean 'run'?)"), "\(typo.errors)")
        #expect(!typo.errors.contains("unexpected arguments"), "\(typo.errors)")
        // Nothing near: the list, no guess.
        let far = try await CLITests.lab(["benchmark"])
        #expect(far.status == 1 && !far.errors.contains("did you mean"), "\(far.errors)")
        #expect(far.errors.contains("the commands: run, serve, compare"), "\(far.errors)")
    }
}
