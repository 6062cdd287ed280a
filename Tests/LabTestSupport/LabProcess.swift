public import Foundation
@_exported public import LabProcesses

/// The `lab` executable the tests run.
public enum LabProcess {
    /// `lab`, built beside the test bundle.
    public static let executable: URL = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        .appendingPathComponent("lab")

    /// Starts `lab serve <arguments>` on a free loopback port and waits for its `listening on` line.
    public static func serve(
        _ arguments: [String],
        timeout: Duration = .seconds(20)
    ) async throws -> (server: ServerProcess, address: ListeningAddress) {
        let server = try ServerProcess(self.executable, ["serve", "--host", "127.0.0.1", "--port", "0"] + arguments)
        return (server, try await ListeningAddress.of(server, timeout: timeout))
    }
}
