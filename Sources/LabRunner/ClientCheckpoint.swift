/// A moment every client of a run passes once (all connected; all done): the last to arrive
/// runs `reached` (the heap snapshot) before anyone waiting goes on. A client may wait there
/// for the others (the idle model's hold; the end, before connections close) or just be
/// counted and go on.
actor ClientCheckpoint {
    private let parties: Int
    private var arrived = 0
    private var passed = false
    private var waiting: [CheckedContinuation<Void, Never>] = []
    private let reached: @Sendable () async -> Void

    /// A checkpoint for `parties` clients; `reached` runs once, when the last arrives.
    init(parties: Int, reached: @escaping @Sendable () async -> Void) {
        self.parties = parties
        self.reached = reached
    }

    /// Counts a client in; with `waiting`, returns only when every client has arrived.
    func arrive(waiting: Bool) async {
        guard !self.passed else { return }
        self.arrived += 1
        if self.arrived >= self.parties {
            self.passed = true
            await self.reached()
            self.resumeAll()
        } else if waiting {
            await withCheckedContinuation { self.waiting.append($0) }
        }
    }

    /// Returns once the checkpoint has passed (or is cancelled), without counting in.
    func passed() async {
        guard !self.passed else { return }
        await withCheckedContinuation { self.waiting.append($0) }
    }

    /// The run is cancelled: nobody waits any more, and `reached` never runs.
    func cancel() {
        self.passed = true
        self.resumeAll()
    }

    private func resumeAll() {
        let waiting = self.waiting
        self.waiting = []
        for continuation in waiting { continuation.resume() }
    }
}
