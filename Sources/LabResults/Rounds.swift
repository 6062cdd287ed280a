import LabCore

/// One round of a run whose load has `rounds` > 1: the calibration sample timed just before
/// it, and the median of every step in every group over the round's iterations. Each round
/// is one repeated sample of each step, the unit `lab check`'s test counts in.
public struct RoundResult: Sendable, Codable, Equatable {
    /// The reference operations, timed while every client waited at the round's start.
    public var calibration: CalibrationSample
    /// The round's medians, per group.
    public var groups: [Group]

    /// One group's medians in one round.
    public struct Group: Sendable, Codable, Equatable {
        /// Which group.
        public var key: GroupKey
        /// The steps measured in the round.
        public var steps: [StepMedian]

        /// A group's round.
        public init(key: GroupKey, steps: [StepMedian]) {
            self.key = key
            self.steps = steps
        }
    }

    /// One step's median in one round.
    public struct StepMedian: Sendable, Codable, Equatable {
        /// The step's report name.
        public var step: String
        /// Successful iterations' samples in the round.
        public var count: Int
        /// Their median, in nanoseconds (exact, from the raw samples).
        public var p50: UInt64

        /// A median.
        public init(step: String, count: Int, p50: UInt64) {
            self.step = step
            self.count = count
            self.p50 = p50
        }
    }

    /// A round.
    public init(calibration: CalibrationSample, groups: [Group]) {
        self.calibration = calibration
        self.groups = groups
    }

    /// The median of `step` in the group `key`, in calibration units; nil if not measured.
    public func calibrated(_ key: GroupKey, _ step: String) -> Double? {
        guard let median = self.groups.first(where: { $0.key == key })?.steps.first(where: { $0.step == step }),
            median.count > 0, self.calibration.unit > 0
        else { return nil }
        return Double(median.p50) / self.calibration.unit
    }
}
