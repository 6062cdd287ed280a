/// What every fuzz target module shares: the failure a broken property throws, the check that
/// throws it, and the hand-over from libFuzzer (docs/hardening.md, "Fuzzing"). Each target is a module of
/// its own (LabFuzzFrame, LabFuzzCX, LabFuzzMsg, LabFuzzScenario) so that its fuzzer in `Fuzz/`
/// links, and libFuzzer instruments and scans after every input, only the code that target
/// reaches; LabFuzzing gathers the four for the tests.

/// A property of a fuzz target that an input broke.
public struct FuzzFailure: Error, CustomStringConvertible, Sendable {
    /// What should have held, and what happened instead.
    public var message: String

    package init(_ message: String) {
        self.message = message
    }

    public var description: String { self.message }
}

/// Checks a property.
package func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws {
    if !condition { throw FuzzFailure(message()) }
}

/// Runs one input as libFuzzer hands it over, and stops the process with the broken property
/// when one does not hold (libFuzzer then saves the input).
package func fuzzInput(
    _ target: String,
    _ data: UnsafePointer<UInt8>?,
    _ count: Int,
    _ run: ([UInt8]) throws -> Void
) {
    let input = data.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
    do {
        try run(input)
    } catch {
        fatalError("fuzz target '\(target)': \(error)")
    }
}
