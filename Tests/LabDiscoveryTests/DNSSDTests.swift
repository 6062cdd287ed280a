import Foundation
import LabCore
import LabTestSupport
import Testing

import LabDiscovery

/// DNS-SD against the real avahi-daemon, checked with Avahi's own tools; these fail (they do
/// not skip) when the daemon is not running: `scripts/services.sh` starts it.
@Suite(.tier(.integration)) struct DNSSDTests {
    @Test func advertisementIsListedByAvahiBrowseUntilCancelled() async throws {
        try await Avahi.requireDaemon()
        let browser = try Avahi.Browser(DNSSD.defaultType)
        let name = Avahi.uniqueName("advertise")
        let port = Int.random(in: 20000...60000)
        let server = ServerTXT(suites: ["x25519", "p256"], tls: true)

        let advertisement = try await DNSSD.advertise(name: name, port: port, txt: server.records, timeout: .seconds(5))
        #expect(advertisement.name == name)
        #expect(advertisement.port == port)

        let entry = try await browser.resolved(name)
        #expect(entry.type == DNSSD.defaultType)
        #expect(entry.port == port)
        // avahi-browse resolves either address family (a daemon may run with IPv6 on).
        #expect(["127.0.0.1", "::1"].contains(entry.address))
        #expect(entry.txt == ["proto=cx/1,msg/1", "suites=x25519,p256", "tls=1"])

        advertisement.cancel()
        advertisement.cancel()  // idempotent
        try await browser.removed(name)
    }

    @Test func releasingAnAdvertisementWithdrawsIt() async throws {
        try await Avahi.requireDaemon()
        let browser = try Avahi.Browser(DNSSD.defaultType)
        let name = Avahi.uniqueName("released")
        do {
            let advertisement = try await DNSSD.advertise(name: name, port: 4242, timeout: .seconds(5))
            #expect(try await browser.resolved(name).port == advertisement.port)
        }
        // Its last reference is gone: deinit deregisters it.
        try await browser.removed(name)
    }

    @Test func aNameTakenOnThisHostIsADiscoveryFailure() async throws {
        try await Avahi.requireDaemon()
        // Avahi renames only on conflicts with other hosts; on one daemon the second
        // registration of a name fails at once.
        let name = Avahi.uniqueName("taken")
        let publisher = try BackgroundProcess(Avahi.publish, [name, DNSSD.defaultType, "4242"])
        defer { publisher.terminate() }
        try await publisher.waitForOutput(containing: "Established under name", timeout: .seconds(5))

        let error = try await #require(throws: LabError.self) {
            try await DNSSD.advertise(name: name, port: 4243, timeout: .seconds(5))
        }
        #expect(error.code == .discoveryFailed)
        #expect(error.message.contains(name) && error.message.contains("NameConflict"))
    }

    @Test func discoversWhatAvahiPublishServiceAnnounces() async throws {
        try await Avahi.requireDaemon()
        let name = Avahi.uniqueName("publish")
        let port = Int.random(in: 20000...60000)
        let publisher = try BackgroundProcess(
            Avahi.publish,
            [name, DNSSD.defaultType, "\(port)", "proto=cx/1", "suites=x25519", "tls=0"]
        )
        defer { publisher.terminate() }
        try await publisher.waitForOutput(containing: "Established under name", timeout: .seconds(5))

        let service = try await DNSSD.discover(type: DNSSD.defaultType, name: name, timeout: .seconds(5))
        #expect(service.instance.name == name)
        #expect(service.instance.domain == DNSSD.domain)
        #expect(service.port == port)
        #expect(service.txt == ["proto": "cx/1", "suites": "x25519", "tls": "0"])
        #expect(service.server == ServerTXT(protocols: ["cx/1"], suites: ["x25519"], tls: false))
        #expect(service.addresses == ["127.0.0.1"])
        #expect(service.host.hasSuffix(".local."))
    }

    @Test func discoversTheFirstInstanceOfAType() async throws {
        try await Avahi.requireDaemon()
        // A type of its own, so that the first instance is this one.
        let type = "_t\(UUID().uuidString.prefix(8).lowercased())._tcp"
        let name = Avahi.uniqueName("first")
        let advertisement = try await DNSSD.advertise(name: name, type: type, port: 4242, timeout: .seconds(5))
        defer { advertisement.cancel() }

        let service = try await DNSSD.discover(type: type, timeout: .seconds(5))
        #expect(service.instance.name == name)
        #expect(service.port == 4242)
        #expect(service.txt == [:])
        #expect(service.server == nil)
        #expect(service.addresses == ["127.0.0.1"])
    }

    @Test func discoveringAnUnknownNameTimesOut() async throws {
        try await Avahi.requireDaemon()
        let name = Avahi.uniqueName("nobody")
        let start = ContinuousClock.now
        // Without its deadline the discovery would not end at all: the test's own deadline
        // (a `timedOut`, not a `discoveryTimeout`) fails it then.
        let error = try await #require(throws: LabError.self) {
            try await withDeadline(.seconds(60), "a discovery with a 1 s timeout") {
                try await DNSSD.discover(type: DNSSD.defaultType, name: name, timeout: .seconds(1))
            }
        }
        let elapsed = ContinuousClock.now - start
        #expect(error.code == .discoveryTimeout, "\(error)")
        #expect(error.message.contains(name) && error.message.contains(DNSSD.defaultType))
        // The margin is for a loaded machine: beside the integration pass's other suites, all
        // starting at once, a discovery's task once waited 10 s for a thread to run on.
        #expect(elapsed >= .seconds(1) && elapsed < .seconds(30), "took \(elapsed)")
    }

    // Far from the discovery's own timeout, not a stopwatch: beside the integration pass's
    // other suites, all starting at once, the discovery's task once waited 10 s for a thread
    // to run on. Cancellation ignored, the discovery would wait out its hour, and the
    // deadline's `timedOut` would fail the test.
    @Test func cancellingADiscoveryEndsIt() async throws {
        try await Avahi.requireDaemon()
        let name = Avahi.uniqueName("cancelled")
        let discovery = Task { try await DNSSD.discover(name: name, timeout: .seconds(3600)) }
        discovery.cancel()
        await #expect(throws: CancellationError.self) {
            try await withDeadline(.seconds(60), "the cancelled discovery") { try await discovery.value }
        }
    }

    @Test func avahiRejectsAMalformedServiceType() async throws {
        try await Avahi.requireDaemon()
        let error = try await #require(throws: LabError.self) {
            try await DNSSD.advertise(name: Avahi.uniqueName("bad"), type: "not a type", port: 4242)
        }
        #expect(error.code == .invalidScenario)
        #expect(error.message.contains("DNSServiceRegister"))
    }

    @Test(arguments: [(name: "", port: 4242), (String(repeating: "n", count: 64), 4242), ("lab", 0), ("lab", 65536)])
    func rejectsBadArguments(name: String, port: Int) async throws {
        let error = try await #require(throws: LabError.self) {
            try await DNSSD.advertise(name: name, port: port, timeout: .seconds(1))
        }
        #expect(error.code == .invalidScenario)
    }

    @Test func rejectsANonPositiveTimeout() async throws {
        let error = try await #require(throws: LabError.self) {
            try await DNSSD.discover(timeout: .zero)
        }
        #expect(error.code == .invalidScenario)
    }

    @Test func anUnreachableDaemonIsADiscoveryFailureThatSaysWhatToRun() {
        // Avahi reports a missing daemon (or system bus) as kDNSServiceErr_Unknown,
        // mDNSResponder as kDNSServiceErr_ServiceNotRunning.
        for code: Int32 in [-65537, -65563] {
            let error = DNSSD.failure(code, during: "DNSServiceBrowse", subject: "_crypttest._tcp")
            #expect(error.code == .discoveryFailed)
            #expect(error.message.contains("avahi-daemon") && error.message.contains("scripts/services.sh"))
            #expect(error.message.contains("DNSServiceBrowse"))
        }
    }

    @Test func errorCodesHaveReadableNames() {
        #expect(DNSSD.errorName(-65537) == "kDNSServiceErr_Unknown (-65537)")
        #expect(DNSSD.errorName(-65548) == "kDNSServiceErr_NameConflict (-65548)")
        #expect(DNSSD.errorName(-65563) == "kDNSServiceErr_ServiceNotRunning (-65563)")
        #expect(DNSSD.errorName(-1) == "kDNSServiceErr_? (-1)")
        #expect(DNSSD.failure(-65540, during: "DNSServiceRegister", subject: "x").code == .invalidScenario)
        #expect(DNSSD.failure(-65548, during: "DNSServiceRegister", subject: "x").code == .discoveryFailed)
    }
}
