import ArgumentParser
import LabCore
import LabCrypto
import LabPlugins
import LabWire

/// `lab demo`: in-process cx/1 exchanges for every suite on every provider pair that can do it.
struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run in-process cx/1 exchanges and print each step's median time."
    )

    @Option(name: .long, help: "Suites to run (default: all).")
    var suite: [String] = []

    @Option(name: .long, help: "Exchanges per suite × client provider × server provider.")
    var count: Int = 20

    @Option(name: .long, help: "Frame length encoding: u32be or u64le.")
    var framing: String = "u32be"

    func validate() throws {
        guard (1...100_000).contains(self.count) else { throw ValidationError("--count must be 1...100000") }
        guard FramingStyle(rawValue: self.framing) != nil else {
            throw ValidationError("--framing must be u32be or u64le")
        }
    }

    func run() async throws {
        try await reportingErrors {
            let providers = try BuiltInPlugins.providers.makeAll()
            let ids = self.suite.isEmpty ? BuiltInPlugins.suites.ids : self.suite
            let framing = Framing(style: FramingStyle(rawValue: self.framing)!)
            print(
                "cx/1 in process, \(self.count) exchanges each, framing \(framing.style.rawValue); times are medians in µs"
            )
            let steps: [Step] = [.encode, .decode, .wrap, .unwrap, .encrypt, .decrypt, .sign, .verify, .exchange]
            print("suite".padding(12) + "client→server".padding(28) + steps.map { $0.name.padding(9) }.joined())
            for id in ids {
                let suite = try BuiltInPlugins.suites.make(id)
                for client in providers {
                    for server in providers {
                        let pair = "\(client.name)→\(server.name)"
                        guard suite.unsupportedReason(on: client) == nil, suite.unsupportedReason(on: server) == nil
                        else {
                            print(
                                id.padding(12) + pair.padding(28) + "skipped: "
                                    + (suite.unsupportedReason(on: client) ?? suite.unsupportedReason(on: server)!)
                            )
                            continue
                        }
                        let result = try CXExchange.run(
                            suite: suite,
                            client: client,
                            server: server,
                            count: self.count,
                            framing: framing,
                            others: providers
                        )
                        let cells = steps.map { step -> String in
                            // One sample per exchange: the step's time on both sides together.
                            let samples = result.outcomes.compactMap { outcome -> UInt64? in
                                let sides = [outcome.client.total(step), outcome.server.total(step)].compactMap { $0 }
                                return sides.isEmpty ? nil : sides.reduce(0, +)
                            }
                            return Self.median(samples).map { String(format1: Double($0) / 1000) }?.padding(9)
                                ?? "-".padding(9)
                        }
                        print(id.padding(12) + pair.padding(28) + cells.joined())
                    }
                }
            }
            print("encode/decode sum both sides; classic is the 2009 suite and insecure by design.")
        }
    }

    static func median(_ values: [UInt64]) -> UInt64? {
        guard !values.isEmpty else { return nil }
        return values.sorted()[values.count / 2]
    }
}

extension String {
    init(format1 value: Double) {
        let tenths = (value * 10).rounded()
        self = "\(Int(tenths) / 10).\(Int(tenths) % 10)"
    }
}
