import Foundation
public import Testing

/// Which tests run: every suite belongs to one tier (`@Suite(.tier(.unit))`), and
/// `LAB_TEST_TIERS` names the tiers that run, comma-separated, or `all`. Unset, only `unit`
/// runs, so that a plain `swift test` is safe and quick: no daemon, no root, no Valgrind,
/// nothing that loads the machine or judges time. `scripts/test` runs every tier, in passes
/// that do not share the cores with each other (docs/testing.md, "Test tiers").
public enum TestTier: String, CaseIterable, Sendable {
    /// Self-contained checks that neither measure time nor load the machine: vectors,
    /// exchanges in process, the Python peers, the wire, the reports, the repository's docs.
    case unit
    /// Runs under Valgrind (`lab run --counted`).
    case counted
    /// Sockets on loopback, child processes, DNS-SD with avahi-daemon, deadlines and
    /// timeouts: they judge time, so they must not share the cores with `unit` or `load`.
    case integration
    /// Load generators: hundreds of socket clients, the messaging service's logins and
    /// rekeys, network namespaces (root) for the two-host lab, heap bounds.
    case load
    /// A thousand clients and a hundred hostile connections against `lab serve`: alone.
    case hostileLoad = "hostile-load"
    /// Issue 37's login, non-reader and metrics attacks beside honest work against `lab
    /// serve`: alone, after the other hostile load.
    case hostileLoginLoad = "hostile-login-load"
    /// Stops and restarts avahi-daemon (root): alone, after every other discovery test.
    case daemonRestart = "daemon-restart"
    /// `lab compare`'s acceptance, judged on real timings: alone.
    case compareAcceptance = "compare-acceptance"
    /// `lab check`'s acceptance, judged on real timings: alone.
    case checkAcceptance = "check-acceptance"
    /// The run over time, judged second by second on open-model schedules: alone (in the
    /// integration pass a lab fell more than a second behind its schedule).
    case intervalsAcceptance = "intervals-acceptance"
    /// The capacity knee, found twice against a KDF-bound server and compared: alone (beside
    /// the intervals suite's runs, two clean-clone CI runs found the knees 0.46 and 0.58 of
    /// what was served apart, 0.26 allowed; alone, they agreed).
    case capacity
    /// The hiccup meter's own tests: it sorts a thread's gaps by what the guest saw over
    /// them, and another test's threads on the cores would switch it out: alone.
    case hiccups
    /// A generator given more clients than it has cores must say it was saturated: judged on
    /// the process's demand for the cores, which other tests' processes would take: alone.
    case saturation
    /// Headless Chromium opening report.html and the live view: alone. In the integration
    /// pass of a clean-clone CI run, the live view's 10 s run had ended before the browser
    /// (and a Python request) got to it; in the unit pass Chromium took the cores the
    /// CPU-bound suites measure with.
    case browser
    /// A Slurm cluster of two nodes in network namespaces (root) running a client fleet of
    /// 1,000 clients in shards against one `lab serve`: alone, as its shards' measured windows
    /// must overlap and another pass's load would move them apart.
    case slurm

    /// The environment variable that names the tiers to run.
    public static let variable = "LAB_TEST_TIERS"

    /// The tiers `value` names (`LAB_TEST_TIERS`'s value; nil or empty: `unit`).
    public static func parse(_ value: String?) throws -> Set<TestTier> {
        guard let value, !value.trimmingCharacters(in: .whitespaces).isEmpty else { return [.unit] }
        var tiers: Set<TestTier> = []
        for name in value.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            if name == "all" {
                tiers.formUnion(Self.allCases)
            } else if let tier = TestTier(rawValue: name) {
                tiers.insert(tier)
            } else {
                throw TierError(
                    "\(Self.variable) names '\(name)', which is no tier; the tiers are "
                        + Self.allCases.map(\.rawValue).joined(separator: ", ") + ", or all"
                )
            }
        }
        return tiers
    }

    /// The tiers this process runs. A name that is no tier stops the test process with a
    /// message: a misspelt tier must not pass by running nothing.
    public static let enabled: Set<TestTier> = {
        do {
            return try parse(ProcessInfo.processInfo.environment[variable])
        } catch {
            fatalError("\(error)")
        }
    }()

    /// Whether this tier runs in this process.
    public var isEnabled: Bool { Self.enabled.contains(self) }
}

/// A `LAB_TEST_TIERS` value that names no tier.
public struct TierError: Error, CustomStringConvertible, Equatable {
    public let description: String
    init(_ description: String) { self.description = description }
}

extension Trait where Self == ConditionTrait {
    /// The suite belongs to `tier`: it runs when `LAB_TEST_TIERS` names the tier.
    public static func tier(_ tier: TestTier) -> Self {
        .enabled(
            if: tier.isEnabled,
            "tier '\(tier.rawValue)': runs when \(TestTier.variable) names it (bash scripts/test runs every tier)"
        )
    }
}
