import LabCore
import LabResults
import LabTestSupport
import Testing

/// The CPU block's figures, its saturation and how shards' blocks merge.
@Suite(.tier(.unit)) struct RunCPUTests {
    static func cpu(user: UInt64, system: UInt64 = 0, waiting: UInt64? = nil, cores: Int? = 2) -> RunCPU {
        RunCPU(
            process: ProcessCPU(userNanoseconds: user, systemNanoseconds: system, waitingNanoseconds: waiting),
            wallNanoseconds: 1_000_000_000,
            cores: cores,
            iterations: 1_000,
            includesServer: false
        )
    }

    @Test("Per iteration, share and demand; saturated from 90% of the cores, waiting included")
    func figures() throws {
        let half = Self.cpu(user: 800_000_000, system: 200_000_000)
        #expect(half.microsecondsPerIteration == 1_000 && half.share == 0.5 && !half.saturated && half.warning == nil)
        // Busy on every core.
        let busy = Self.cpu(user: 1_700_000_000, system: 100_000_000)
        #expect(busy.saturated && busy.share == 0.9)
        #expect(
            busy.warning?.hasPrefix("The load generator used 90% of its 2 cores while the clients ran") == true,
            "\(busy.warning ?? "")"
        )
        // Beside other processes: little CPU, much waiting for a core.
        let crowded = Self.cpu(user: 900_000_000, waiting: 1_000_000_000)
        #expect(crowded.saturated && crowded.share == 0.45 && crowded.demand == 0.95)
        #expect(
            crowded.warning?.contains("45% of its 2 cores, and its threads waited for one 50% of the time more,")
                == true
        )
        #expect(!Self.cpu(user: 900_000_000, waiting: 700_000_000).saturated)
        // Without cores (merged shards) there is no share, and no judgement from it.
        #expect(Self.cpu(user: 1_900_000_000, cores: nil).share == nil)
    }

    @Test("Shards merge: CPU and iterations add, cores and the server's share are dropped, saturation kept")
    func merge() {
        var merged = Self.cpu(user: 1_900_000_000, waiting: 5)
        merged.server = RunCPU.Server(
            process: ProcessCPU(userNanoseconds: 10, systemNanoseconds: 0),
            requests: 1,
            wallNanoseconds: 1,
            cores: 2
        )
        merged.merge(Self.cpu(user: 100_000_000, system: 7, waiting: nil))
        #expect(
            merged.process == ProcessCPU(userNanoseconds: 2_000_000_000, systemNanoseconds: 7, waitingNanoseconds: nil)
        )
        #expect(merged.iterations == 2_000 && merged.cores == nil && merged.server == nil && merged.saturated)
        #expect(merged.microsecondsPerIteration == 1_000.000_003_5)
    }

    @Test("A server's CPU per request; readings subtract, a counter that went back gives 0")
    func serverAndReadings() {
        let server = RunCPU.Server(
            process: ProcessCPU(userNanoseconds: 3_000_000, systemNanoseconds: 1_000_000),
            requests: 8,
            wallNanoseconds: 4_000_000,
            cores: 4
        )
        #expect(server.microsecondsPerRequest == 500 && server.share == 0.25)
        let earlier = ProcessCPU(userNanoseconds: 10, systemNanoseconds: 20, waitingNanoseconds: 30)
        let later = ProcessCPU(userNanoseconds: 15, systemNanoseconds: 26, waitingNanoseconds: 25)
        #expect(later.since(earlier) == ProcessCPU(userNanoseconds: 5, systemNanoseconds: 6, waitingNanoseconds: 0))
        let now = ProcessCPU.now()
        #expect(now != nil && now?.waitingNanoseconds != nil, "this process's CPU and its threads' run-queue delay")
    }
}
