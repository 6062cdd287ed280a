import LabBenchmarks
import LabTestSupport
import Testing

/// The micro-benchmarks of `Benchmarks/` (a package of its own, not built by CI) take their
/// cases from the lab: each one must still build here and run once.
@Suite(.tier(.unit)) struct BenchmarkCasesTests {
    @Test("Every micro-benchmark case runs once, names are unique, and each returns something to consume")
    func everyCaseRuns() throws {
        let cases = try BenchmarkCases.primitives() + BenchmarkCases.exchange()
        #expect(Set(cases.map(\.name)).count == cases.count, "duplicate names: \(cases.map(\.name))")
        for item in cases {
            let consumed = try item.run()
            #expect(consumed > 0, "\(item.name) returned \(consumed)")
        }
        // Both providers' primitives, every suite each provider can run, the codec, the KDFs.
        #expect(cases.count == 10 + 4 + 8 + 3, "\(cases.map(\.name))")
    }
}
