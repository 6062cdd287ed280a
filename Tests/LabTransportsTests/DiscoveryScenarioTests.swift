import Foundation
import Histogram
import LabBuiltIns
import LabCore
import LabResults
import LabRunner
import LabTestSupport
import Testing

/// `lab serve --advertise` as real mDNS clients see it, and a scenario that finds it by DNS-SD.
/// Needs avahi-daemon (`scripts/services.sh`, run by the README's test command).
@Suite(.tier(.integration)) struct DiscoveryScenarioTests {
    @Test("avahi-browse lists lab serve --advertise with its port and TXT; a discover scenario finds and uses it")
    func advertisedServerIsFoundByAvahiAndByTheLab() async throws {
        let name = "lab-test-\(UUID().uuidString.prefix(8))"
        let (server, address) = try await LabProcess.serve(["--advertise", name, "--suites", "x25519,pq", "--tls"])
        defer { server.terminate() }
        _ = try await server.line(startingWith: "advertised as", timeout: .seconds(10))
        let pin = try await server.line(startingWith: "tls: spki sha256/", timeout: .seconds(5))
            .dropFirst("tls: spki sha256/".count)

        // The independent mDNS client: `avahi-browse -rp` prints one `=` line per resolved
        // service. Not `-t`, which can hang when another test's instance vanishes while it
        // resolves (avahi#264): it runs until the line for ours arrives, then is killed.
        let browser = try ServerProcess(URL(fileURLWithPath: "/usr/bin/avahi-browse"), ["-rp", "_crypttest._tcp"])
        defer { browser.terminate() }
        let line = try await browser.line(described: "the resolved line for '\(name)'", timeout: .seconds(15)) {
            $0.hasPrefix("=") && $0.contains(";\(name);")
        }
        let fields = line.split(separator: ";", omittingEmptySubsequences: false)
        #expect(fields.count >= 10)
        #expect(fields[8] == "\(address.port)", "the advertised port is the listening one")
        #expect(fields[9].contains("\"proto=cx/1,msg/1\""), "lab serve answers both protocols")
        #expect(fields[9].contains("\"suites=x25519,pq\""))
        #expect(fields[9].contains("\"tls=1\""))

        // The lab's own client finds it by name, pins its key, and runs against it.
        let json = """
            {
              "name": "discovered",
              "server": {
                "transport": "tls", "discover": "_crypttest._tcp", "instance": "\(name)",
                "tls": { "pin": { "spkiSHA256": "\(pin)" } }
              },
              "clients": { "count": 3 },
              "load": { "iterations": 4 },
              "flows": [ { "flow": "cx", "suite": "x25519" } ]
            }
            """
        let result = try await TestPlan.run(json)
        #expect(result.errorCount == 0 && result.completedIterations == 12)
        let group = try #require(result.groups.first)
        #expect(group.steps[.discover]?.totalCount == 1, "discovery is timed once per run")
        #expect(group.steps[.connect]?.totalCount == 3, "one connect per client")
        #expect(result.metadata.transport.contains(name) && result.metadata.transport.contains("\(address.port)"))

        let status = try await server.stop(timeout: .seconds(10))
        #expect(status == 0)
        #expect(server.lines.contains { $0.hasPrefix("stopped:") && $0.contains("12 exchanges") })
    }

    @Test("Discovering a name nobody advertises fails the run with discoveryTimeout, naming it")
    func nothingFoundIsAClearError() async throws {
        let name = "nobody-\(UUID().uuidString.prefix(8))"
        let json = """
            {
              "name": "lost",
              "server": { "transport": "tcp", "discover": "_crypttest._tcp", "instance": "\(name)", "discoveryTimeout": "1 s" },
              "flows": [ { "flow": "cx" } ]
            }
            """
        let plan = try TestPlan.from(json)
        let error = await #expect(throws: LabError.self) { _ = try await Runner(plan: plan).run() }
        #expect(error?.code == .discoveryTimeout)
        #expect(error?.message.contains(name) == true, "\(error?.message ?? "")")
    }
}
