import Benchmark
import LabBenchmarks

/// Every primitive cx/1 uses, per provider, timed alone: the lab's own cost floor.
/// The cases live in the lab (`LabBenchmarks`), whose tests run each once.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal, .mallocCountTotal],
        maxDuration: .seconds(2),
        maxIterations: 100_000
    )
    for item in try! BenchmarkCases.primitives() { register(item) }
}

/// Times `item.run`, consuming what it returns.
func register(_ item: BenchmarkCase) {
    Benchmark(item.name) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try item.run())
        }
    }
}
