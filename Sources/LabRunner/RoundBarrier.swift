import LabCore
import LabResults

/// Where the clients of a run with `rounds` > 1 meet between rounds: the last client to
/// arrive times a calibration sample while the others wait, then all go on together, so
/// each round's calibration is measured on a machine doing nothing else for the lab.
actor RoundBarrier {
    private var parties: Int
    private var arrived = 0
    /// The round the clients now waiting wait to begin.
    private var pending = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []
    private var cancelled = false
    private let calibrate: @Sendable () -> CalibrationSample?
    /// The calibration sample taken before each round, by round.
    private(set) var samples: [Int: CalibrationSample] = [:]

    /// A barrier for `parties` clients; `calibrate` runs once per round.
    init(parties: Int, calibrate: @escaping @Sendable () -> CalibrationSample?) {
        self.parties = parties
        self.calibrate = calibrate
    }

    /// Waits until every client still running has arrived at `round`.
    func arrive(at round: Int) async {
        guard !self.cancelled else { return }
        self.pending = round
        self.arrived += 1
        if self.arrived >= self.parties {
            self.release(round)
        } else {
            await withCheckedContinuation { self.waiting.append($0) }
        }
    }

    /// A client stops early (the deadline): the others no longer wait for it.
    func leave() {
        self.parties -= 1
        if self.parties > 0, self.arrived >= self.parties, !self.waiting.isEmpty { self.release(self.pending) }
    }

    /// The run is cancelled: nobody waits any more.
    func cancel() {
        self.cancelled = true
        self.resumeAll()
    }

    private func release(_ round: Int) {
        if let sample = self.calibrate() { self.samples[round] = sample }
        self.arrived = 0
        self.resumeAll()
    }

    private func resumeAll() {
        let waiting = self.waiting
        self.waiting = []
        for continuation in waiting { continuation.resume() }
    }
}
