import Foundation
public import LabCore
import LabResults
import LabScenario

/// An open load's rate given as a share of capacity (`"rate": "70% of capacity"`), made a
/// rate per second before the run: the same clients, against the same server, run back to back
/// (the closed model, by time) for `warmup` then `duration`, and the rate they carried in the
/// measured part, times the share, is the run's rate. So a scenario asks for a load this
/// machine can carry without knowing the machine.
///
/// The probe is a run of its own (its keys, connections and set-up are made again by the run
/// that follows); its figures are kept only as `LoadSpec.probed`, which the results' load
/// description states.
public enum CapacityProbe {
    /// The probe's warm-up, left out of its rate.
    public static let warmup = TimeSpan.milliseconds(300)
    /// The probe's measured part.
    public static let duration = TimeSpan.seconds(1)

    /// `plan` with its rate found, or `plan` itself when its rate was given per second.
    public static func resolve(_ plan: Plan) async throws -> Plan {
        guard let share = plan.scenario.load.capacityShare, plan.scenario.load.probed == nil else { return plan }
        let result = try await Runner(plan: Self.probe(of: plan)).run()
        let seconds = Double(result.measuredNanoseconds) / 1e9
        guard result.completedIterations > 0, seconds > 0 else {
            throw LabError(
                .unsupported,
                "The capacity probe (\(plan.scenario.clients.count) clients back to back for \(Self.duration)) "
                    + "completed no exchange, so \"\(TimeSpan.trimmed(share * 100))% of capacity\" has no rate"
            )
        }
        let carried = Double(result.completedIterations) / seconds
        var resolved = plan
        // Whole exchanges per second from 10/s up: the figure a person would have written.
        let rate = share * carried >= 10 ? (share * carried).rounded() : share * carried
        resolved.scenario.load.rate = min(1_000_000, max(rate, 1 / Self.measuredSeconds(plan.scenario.load)))
        resolved.scenario.load.probed = CapacityFinding(
            carried: carried,
            duration: Self.duration,
            clients: plan.scenario.clients.count
        )
        return resolved
    }

    /// The probe's plan: the scenario's flows, server and clients, closed, one stage of
    /// `duration` after `warmup`; no thresholds, reports or data kept.
    static func probe(of plan: Plan) -> Plan {
        var probe = plan
        var load = LoadSpec()
        load.model = .closed
        load.stages = [LoadStage(clients: plan.scenario.clients.count, duration: Self.duration)]
        load.warmup = Self.warmup
        load.duration = TimeSpan(nanoseconds: Self.warmup.nanoseconds + Self.duration.nanoseconds)
        load.deadline = TimeSpan(nanoseconds: load.duration.nanoseconds + plan.scenario.load.deadline.nanoseconds)
        probe.scenario.load = load
        probe.scenario.thresholds = [:]
        probe.thresholds = []
        probe.dataDirectory = nil
        return probe
    }

    /// The open load's measured seconds (duration after warm-up): the rate is at least one
    /// exchange in them.
    private static func measuredSeconds(_ load: LoadSpec) -> Double {
        max(1e-3, load.duration.seconds - load.warmup.seconds)
    }
}
