public import LabCore

extension Connection {
    /// A request whose bytes count as an `exchange`'s, for tests that do not look at them.
    public func request<R: StepRecorder>(_ body: [UInt8], recorder: inout R) async throws -> [UInt8] {
        try await self.request(body, step: .exchange, recorder: &recorder)
    }
}
