import LabCore
import LabTestSupport
import Testing

/// What a counted run's children are given (`StackPadding`): whatever the command line and
/// environment, the strings at the top of the stack come to a whole number of pages. (That
/// this keeps the counts alike is measured: docs/performance.md.)
@Suite(.tier(.unit)) struct StackPaddingTests {
    @Test("Arguments and environment of any length are padded to a multiple of 4 KiB (plus a layout's offset), nothing else changed")
    func padsToAPage() {
        var generator = SystemRandomNumberGenerator()
        for trial in 0..<200 {
            let arguments = (0..<Int.random(in: 1...12, using: &generator)).map { _ in
                String(repeating: "a", count: Int.random(in: 0...300, using: &generator))
            }
            var environment: [String: String] = [:]
            for index in 0..<Int.random(in: 0...40, using: &generator) {
                environment["V\(index)"] = String(repeating: "é", count: Int.random(in: 0...200, using: &generator))
            }
            // A pad already there (a counted run started from one) is replaced, not added to.
            if trial.isMultiple(of: 3) { environment[StackPadding.variable] = String(repeating: "x", count: trial) }
            // `--layout N` asks for 16·N bytes more than a whole number of pages.
            let offset = trial.isMultiple(of: 2) ? 0 : 16 * (trial % 256)
            let padded = StackPadding.padded(environment, arguments: arguments, offset: offset)
            let size = StackPadding.size(arguments: arguments, environment: padded)
            #expect(size % 4_096 == offset, "trial \(trial): \(size) bytes, offset \(offset)")
            #expect(size - StackPadding.size(arguments: arguments, environment: environment.filter { $0.key != StackPadding.variable }) <= 4_096 + StackPadding.variable.utf8.count + 1)
            #expect(padded.filter { $0.key != StackPadding.variable } == environment.filter { $0.key != StackPadding.variable })
        }
    }

    @Test("The size counts each string's bytes in UTF-8 and its NUL, a variable as NAME=value")
    func sizeIsTheKernels() {
        // "/bin/lab\0" 9, "é\0" 3; "A=b\0" 4, "KEY=\0" 5.
        #expect(StackPadding.size(arguments: ["/bin/lab", "é"], environment: ["A": "b", "KEY": ""]) == 21)
    }
}
