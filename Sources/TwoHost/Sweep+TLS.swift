import Foundation
import LabProcesses

/// A sweep's TLS part: one handshake per client, once per key-exchange group, against a
/// `lab serve --tls` that accepts them all.
extension TwoHostRun {
    /// The groups a sweep compares, in its rows' order.
    static let sweepGroups = ["x25519", "x25519-mlkem768"]
    /// The port of the TLS baseline's server on host B.
    static let tlsBaselinePort = 7413

    /// What `lab serve` needs to serve the sweep's TLS load: the identity sweep-tls.json pins.
    var tlsServeOptions: [String] {
        let folder = self.settings.sweepTLSScenario.deletingLastPathComponent()
        return [
            "--tls-certificate", folder.appendingPathComponent("sweep-tls.pem").path,
            "--tls-key", folder.appendingPathComponent("sweep-tls.key").path,
            "--tls-groups", Self.sweepGroups.joined(separator: ","),
        ]
    }

    /// The `--set`s that run sweep-tls.json with `group` alone (and `--handshakes` clients).
    func groupSets(_ group: String) -> [String] {
        ["server.tls.groups=[\"\(group)\"]"] + (self.settings.handshakes.map { ["clients.count=\($0)"] } ?? [])
    }

    /// Host A serves TLS and advertises; host B runs sweep-tls.json once per group into
    /// `<out>/<folder>tls-<group>`.
    func tlsHosts(_ a: ServerProcess, _ b: ServerProcess, link: String, folder: String, conditions: LinkConditions)
        async throws
    {
        let suffix = "-" + folder.dropLast()
        let server = try self.start(
            in: a,
            log: "a/serve-tls\(suffix)",
            [
                self.settings.lab.path, "serve", "--host", "0.0.0.0", "--port", "0", "--no-messaging", "--advertise",
                "lab-a-tls", "--report", self.report("\(folder)server-a-tls"), "--packets",
            ] + self.tlsServeOptions
        )
        _ = try await self.line(of: server, startingWith: "listening on ", what: "lab serve --tls on host A")
        _ = try await self.line(of: server, startingWith: "advertised as ", what: "lab serve --tls on host A")
        for group in Self.sweepGroups {
            self.output.say("running sweep-tls.json on host B with TLS group \(group)")
            try await self.runScenario(
                on: b,
                self.settings.sweepTLSScenario,
                report: "\(folder)tls-\(group)",
                log: "b/run-tls-\(group)\(suffix)",
                tags: ["link=\(conditions)", "link.applied=\(link)", "tls.group=\(group)"],
                thresholdsAreData: true,
                // An instance of its own: host B's avahi may still hold the cx server's
                // record under "lab-a" when its goodbye was lost on the link.
                sets: ["server.instance=\"lab-a-tls\""] + self.groupSets(group)
            )
        }
        let stopped = try await self.stopServer(server, "lab serve --tls on host A")
        self.output.say("TLS runs done; server A \(stopped)")
    }

    /// The TLS baseline on host B alone: sweep-tls.json against 127.0.0.1, once per group,
    /// into `<out>/single-host-tls-<group>`.
    func tlsSingleHost(_ b: ServerProcess) async throws {
        let port = Self.tlsBaselinePort
        let local = [
            "server.discover=null", "server.instance=null", "server.discoveryTimeout=null",
            "server.address=\"127.0.0.1:\(port)\"",
        ]
        _ = try await self.singleHost(
            b,
            scenario: self.settings.sweepTLSScenario,
            port: port,
            serveOptions: self.tlsServeOptions,
            serverReport: "server-single-host-tls",
            runs: Self.sweepGroups.map { ("single-host-tls-\($0)", local + self.groupSets($0)) }
        )
    }
}
