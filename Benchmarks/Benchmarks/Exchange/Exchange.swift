import Benchmark
import LabBenchmarks

/// What an exchange costs beyond its primitives: the cx/1 codec with its framing, one whole
/// in-process exchange per suite and provider, and the messaging service's password KDFs.
/// The cases live in the lab (`LabBenchmarks`), whose tests run each once.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal, .mallocCountTotal],
        maxDuration: .seconds(2),
        maxIterations: 100_000
    )
    for item in try! BenchmarkCases.exchange() {
        Benchmark(
            item.name,
            configuration: .init(
                metrics: [.wallClock, .cpuTotal, .mallocCountTotal, .peakMemoryResident],
                maxDuration: .seconds(item.maxIterations < 100 ? 3 : 2),
                maxIterations: item.maxIterations
            )
        ) { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(try item.run())
            }
        }
    }
}
