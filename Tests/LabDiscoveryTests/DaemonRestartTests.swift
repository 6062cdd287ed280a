import Foundation
import LabCore
import LabDiscovery
import LabTestSupport
import Testing

/// Issue 8: `lab serve --advertise` survives avahi-daemon going away and coming back, and
/// registers its instance again. Stops the machine's avahi-daemon for a few seconds, so
/// `scripts/test` runs it alone, after every other discovery test.
@Suite(.tier(.daemonRestart), .serialized) struct DaemonRestartTests {
    static let services = RepositoryPaths.root.appendingPathComponent("scripts/services.sh")

    @Test("lab serve registers its instance again after avahi-daemon restarts")
    func reRegistersAfterTheDaemonRestarts() async throws {
        try await Avahi.requireDaemon()
        let name = Avahi.uniqueName("restart")
        let (server, address) = try await LabProcess.serve([
            "--no-messaging", "--suites", "x25519", "--advertise", name,
        ])
        defer { server.terminate() }
        let before = try await DNSSD.discover(name: name, timeout: .seconds(10))
        #expect(before.port == address.port)

        // The daemon goes away: the server notices, and keeps serving.
        let killed = try await ChildProcess.run(URL(fileURLWithPath: "/usr/sbin/avahi-daemon"), ["--kill"])
        #expect(killed.status == 0, "\(killed.errors)")
        var restarted = false
        defer {
            // Whatever happened, leave the daemon running for the other tests.
            if !restarted { _ = try? ChildProcess.runWaiting(URL(fileURLWithPath: "/bin/bash"), [Self.services.path]) }
        }
        // The server reports the loss in its log: the event awaited.
        try await server.errors(containing: "advertisement \(name) lost", timeout: .seconds(10))

        // And comes back: the instance is found again, on the same port.
        let started = try await ChildProcess.run(URL(fileURLWithPath: "/bin/bash"), [Self.services.path])
        restarted = started.status == 0
        try #require(restarted, "\(started.output) \(started.errors)")
        let after = try await DNSSD.discover(name: name, timeout: .seconds(20))
        #expect(after.port == address.port)
        #expect(server.errors.contains("registered again"))
        // Still alive and answering: it stops cleanly on SIGINT.
        #expect(try await server.stop(signal: SIGINT, timeout: .seconds(20)) == 0)
    }
}
