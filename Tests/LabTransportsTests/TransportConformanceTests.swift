import LabCore
import LabTestSupport
import Testing

/// Every transport passes the same suite (`TransportConformance` in LabTestSupport).
@Suite(.tier(.integration)) struct TransportConformanceTests {
    static let framings = FramingStyle.allCases

    @Test(arguments: TransportConformance.transports, Self.framings)
    func roundTrips(transport: String, framing: FramingStyle) async throws {
        let limit = 2 << 20
        try await TransportConformance.roundTrips(
            try TransportConformance.make(transport, options: TransportOptions(framing: framing, maxFrameBytes: limit)),
            maxFrameBytes: limit,
            framing: framing
        )
    }

    @Test(arguments: TransportConformance.transports)
    func serverStepsReachTheClient(transport: String) async throws {
        try await TransportConformance.serverStepsReachTheClient(try TransportConformance.make(transport))
    }

    @Test(arguments: TransportConformance.transports)
    func reopensAfterServerClose(transport: String) async throws {
        try await TransportConformance.reopensAfterServerClose(try TransportConformance.make(transport))
    }

    @Test(arguments: TransportConformance.transports)
    func servesManyAtOnce(transport: String) async throws {
        try await TransportConformance.servesManyAtOnce(
            try TransportConformance.make(transport),
            clients: 50,
            requests: 20
        )
    }

    @Test(arguments: TransportConformance.transports)
    func refusesOversizedBodies(transport: String) async throws {
        let limit = 4096
        try await TransportConformance.refusesOversizedBodies(
            try TransportConformance.make(transport, options: TransportOptions(maxFrameBytes: limit)),
            maxFrameBytes: limit
        )
    }
}
