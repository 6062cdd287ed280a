import LabCore
import LabScenario

extension Plan {
    /// This plan with only its flow `index`, and that flow's share of the load: what one
    /// process of a counted run (`lab run --counted`) runs. A counted run counts each flow in a
    /// process of its own: RSA's blinding and OAEP's and PSS's random bytes change the sizes
    /// of OpenSSL's allocations from run to run, and in one process that moved the counts of
    /// the x25519 steps run beside them (AES-GCM `decrypt` by up to 0.5%).
    ///
    /// The share is by weight, as the flows' picker would split the load on average:
    /// closed, the flow's part of the iterations and warm-up iterations (at least one each
    /// where the scenario has any, rounds at most as many as the iterations); open, its part
    /// of the rate. Thresholds are left to the process that combines the flows' results.
    public func countedAlone(flow index: Int) -> Plan {
        var plan = self
        let total = max(1, self.flows.reduce(0) { $0 + $1.entry.weight })
        let weight = self.flows[index].entry.weight
        func share(_ count: Int) -> Int { count == 0 ? 0 : max(1, (count * weight + total / 2) / total) }
        plan.flows = [self.flows[index]]
        plan.thresholds = []
        var load = self.scenario.load
        switch load.model {
        case .closed:
            load.iterations = share(load.iterations)
            load.warmupIterations = share(load.warmupIterations)
            load.rounds = min(load.rounds, load.iterations)
        case .open:
            load.rate = load.rate * Double(weight) / Double(total)
        case .idle:
            break
        }
        plan.scenario.load = load
        return plan
    }
}
