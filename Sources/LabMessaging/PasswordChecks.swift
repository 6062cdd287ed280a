import LabCore
import NIOPosix
import Synchronization

/// Password hashing off the server's event loops, bounded.
///
/// A KDF run is deliberately slow (scrypt at its default cost: 128 MiB and a large fraction of
/// a second). Run on an event loop, a flood of wrong passwords would hold the loops, and every
/// connection they serve, for as long as it lasts, and make as many 128 MiB allocations at once
/// as there are loops. Here at most `workers` checks run at once, on threads of the pool's own;
/// at most `queueLimit` more wait their turn (first come, first served); one more is answered
/// `busy` at once and changes nothing.
///
/// Threads of its own, not the process's shared dispatch threads (an `OperationQueue` runs
/// there): on Linux those are as many as the cores, for every concurrent queue of the
/// process, so each KDF run held one of them, `workers` above the core count were never
/// reached, and anything else in the process that blocked those threads stopped every login.
public final class PasswordChecks: Sendable {
    /// Checks that run at once.
    public let workers: Int
    /// Checks that may wait for a worker.
    public let queueLimit: Int
    private let threads: NIOThreadPool
    private let admission = Mutex(Admission())

    /// Checks running and waiting now, the waiting ones by source, and who waits for the
    /// count to change.
    ///
    /// Fair between sources (`FramePeer.source`): a freed worker goes to the sources with
    /// checks waiting in turn, one check each, so a source that queues many checks delays
    /// another's by at most one of its own per round. When the queue is full, a check takes
    /// the newest place of a busier network (`pushOut`: compared /16 or /32 first, then /24
    /// or /48, then by address; the place taken is answered `busy`): one client's flood of
    /// logins, for names that exist or not, from one address or a network's many, never
    /// leaves a client of another network without a place.
    private struct Admission {
        var running = 0
        var waiting = 0
        var queues: [String: [Slot]] = [:]
        /// Sources with checks waiting, in the order they are served.
        var order: [String] = []
        var turn = 0
        var waiters: [Int: (condition: @Sendable (Int) -> Bool, continuation: CheckedContinuation<Void, Never>)] = [:]
        var nextWaiter = 0
        /// The arrival number of the next check (`Slot.sequence`).
        var arrivals: UInt64 = 0

        var count: Int { self.running + self.waiting }

        /// The waiters the count now satisfies, removed, for resuming.
        mutating func satisfied() -> [CheckedContinuation<Void, Never>] {
            let count = self.count
            let satisfied = self.waiters.filter { $0.value.condition(count) }
            for key in satisfied.keys { self.waiters[key] = nil }
            return satisfied.values.map(\.continuation)
        }

        mutating func enqueue(_ slot: Slot, source: String) {
            if self.queues[source, default: []].isEmpty { self.order.append(source) }
            self.queues[source, default: []].append(slot)
            self.waiting += 1
        }

        /// Takes `slot` out of its source's queue; false if it is not there.
        mutating func remove(_ slot: Slot, source: String) -> Bool {
            guard var queue = self.queues[source], let index = queue.firstIndex(where: { $0 === slot }) else {
                return false
            }
            queue.remove(at: index)
            self.waiting -= 1
            self.store(queue, source)
            return true
        }

        /// The next source's oldest waiting check, taken out, in round-robin order.
        mutating func next() -> Slot? {
            guard !self.order.isEmpty else { return nil }
            if self.turn >= self.order.count { self.turn = 0 }
            let source = self.order[self.turn]
            var queue = self.queues[source] ?? []
            let slot = queue.removeFirst()
            self.waiting -= 1
            let emptied = queue.isEmpty
            self.store(queue, source)
            // The source's place in the order goes to the next one, or it was removed.
            if !emptied { self.turn += 1 }
            return slot
        }

        /// The place a newcomer from `source` takes when the queue is full, if any: compared
        /// network by network, widest first (`FramePeer.networks`). At each level, when some
        /// other network has more than one check more waiting than the newcomer's, the newest
        /// check of that network's busiest source is taken (descending the same way inside
        /// it); when none has, the comparison goes on inside the newcomer's own network. So a
        /// flood from many addresses of one network (one /16, one IPv6 /32) gives up places to
        /// a source outside it, whatever the number of its addresses; sources of one network
        /// share the places its share leaves them.
        mutating func pushOut(for source: String) -> Slot? {
            let mine = FramePeer.networks(of: source)
            var candidates = Array(self.queues.keys)
            for (level, network) in mine.enumerated() {
                var counts: [String: Int] = [:]
                for other in candidates { counts[Self.network(other, level), default: 0] += self.queues[other]!.count }
                let own = counts[network] ?? 0
                if let (busiest, count) = counts.max(by: { ($0.value, $1.key) < ($1.value, $0.key) }),
                    busiest != network, count > own + 1
                {
                    let inside = candidates.filter { Self.network($0, level) == busiest }
                    return self.takeNewest(from: inside, below: level + 1)
                }
                candidates = candidates.filter { Self.network($0, level) == network }
                if candidates.isEmpty { return nil }
            }
            return nil
        }

        /// `source`'s network at `level` (itself past its widest-to-narrowest list).
        private static func network(_ source: String, _ level: Int) -> String {
            let networks = FramePeer.networks(of: source)
            return level < networks.count ? networks[level] : source
        }

        /// The newest check of the busiest source among `sources`, found by descending into
        /// the busiest network at each level from `level` on (of networks as busy, the one
        /// with the newest check: the place that has waited least); taken out of its queue.
        private mutating func takeNewest(from sources: [String], below level: Int) -> Slot? {
            var sources = sources
            var level = level
            while Set(sources).count > 1, level < 4 {
                var busiest: [String: (count: Int, newest: UInt64)] = [:]
                for other in sources {
                    let queue = self.queues[other]!
                    let old = busiest[Self.network(other, level), default: (0, 0)]
                    busiest[Self.network(other, level)] = (old.count + queue.count, max(old.newest, queue.last!.sequence))
                }
                guard let chosen = busiest.max(by: { ($0.value.count, $0.value.newest) < ($1.value.count, $1.value.newest) })?.key
                else { break }
                sources = sources.filter { Self.network($0, level) == chosen }
                level += 1
            }
            guard let source = sources.first, var queue = self.queues[source] else { return nil }
            let slot = queue.removeLast()
            self.waiting -= 1
            self.store(queue, source)
            return slot
        }

        private mutating func store(_ queue: [Slot], _ source: String) {
            if queue.isEmpty {
                self.queues[source] = nil
                if let index = self.order.firstIndex(of: source) {
                    self.order.remove(at: index)
                    if index < self.turn { self.turn -= 1 }
                }
            } else {
                self.queues[source] = queue
            }
        }
    }

    /// Checks running or waiting now.
    public var admitted: Int { self.admission.withLock { $0.count } }

    /// Checks waiting now from `source`.
    public func waiting(from source: String) -> Int { self.admission.withLock { $0.queues[source]?.count ?? 0 } }

    /// Returns once the number of checks running or waiting satisfies `condition` (at once if
    /// it does now), or when the calling task is cancelled: for tests and tools that must act
    /// when the pool is busy or free, without polling. `condition` runs under the pool's lock:
    /// it must not touch the pool (reading `admitted` there would deadlock).
    public func admitted(where condition: @escaping @Sendable (Int) -> Bool) async {
        let id = self.admission.withLock { admission in
            admission.nextWaiter += 1
            return admission.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = self.admission.withLock { admission in
                    if Task.isCancelled || condition(admission.count) { return true }
                    admission.waiters[id] = (condition, continuation)
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            let waiter = self.admission.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.continuation.resume()
        }
    }

    /// A pool of `workers` threads with room for `queueLimit` waiting checks.
    public init(workers: Int, queueLimit: Int) {
        self.workers = max(1, workers)
        self.queueLimit = max(0, queueLimit)
        self.threads = NIOThreadPool(numberOfThreads: self.workers)
        self.threads.start()
    }

    deinit {
        // Checks still waiting are resumed with `CancellationError` (their work item is
        // called `.cancelled`); the threads end after the running ones.
        self.threads.shutdownGracefully { _ in }
    }

    static func busy() -> MsgFailure {
        MsgFailure(code: .busy, message: "Too many password checks are waiting; try again later")
    }

    /// Runs `work` on a worker, in its turn among the checks of every source, and returns
    /// its result with the nanoseconds it took (the `kdf` step: the hash itself, not the
    /// wait); throws `busy` when the queue is full (or this check's place was taken by a
    /// source with fewer waiting).
    ///
    /// A check still waiting when its task is cancelled (the server shutting down) is dropped
    /// and throws `CancellationError` at once; one already running finishes, since a KDF run
    /// cannot be interrupted.
    public func run<T: Sendable>(
        source: String = "",
        _ work: @escaping @Sendable () throws -> T
    ) async throws -> (T, UInt64) {
        let (slot, admitted, pushedOut, satisfied) = self.admission.withLock {
            admission -> (Slot, Bool?, Slot?, [CheckedContinuation<Void, Never>]) in
            admission.arrivals += 1
            let slot = Slot(sequence: admission.arrivals)
            if admission.running < self.workers {
                admission.running += 1
                return (slot, true, nil, admission.satisfied())
            }
            var pushedOut: Slot? = nil
            if admission.waiting >= self.queueLimit {
                pushedOut = admission.pushOut(for: source)
                guard pushedOut != nil else { return (slot, nil, nil, []) }
            }
            admission.enqueue(slot, source: source)
            return (slot, false, pushedOut, admission.satisfied())
        }
        for waiter in satisfied { waiter.resume() }
        pushedOut?.resolve(.failure(Self.busy()))
        guard let admitted else { throw Self.busy() }
        if !admitted {
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in slot.arm(continuation) }
            } onCancel: {
                let removed = self.admission.withLock { $0.remove(slot, source: source) }
                if removed { slot.resolve(.failure(CancellationError())) }
            }
        }
        // This check holds a worker's place until it ends: then the next source's turn.
        defer {
            let (next, satisfied) = self.admission.withLock { admission -> (Slot?, [CheckedContinuation<Void, Never>]) in
                let next = admission.next()
                if next == nil { admission.running -= 1 }
                return (next, admission.satisfied())
            }
            for waiter in satisfied { waiter.resume() }
            next?.resolve(.success(()))
        }
        let ticket = Ticket<(T, UInt64)>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard ticket.arm(continuation) else { return }
                self.threads.submit { state in
                    guard state == .active else { return ticket.cancel() }
                    // Taken by whoever comes first: this worker, or the cancellation.
                    guard let continuation = ticket.take() else { return }
                    continuation.resume(
                        with: Result {
                            let start = Stopwatch.now()
                            let value = try work()
                            return (value, Stopwatch.now() &- start)
                        }
                    )
                }
            }
        } onCancel: {
            ticket.cancel()
        }
    }
}

/// One check waiting for a worker's place: given it, or refused, exactly once, in either
/// order with the wait itself beginning (`arm`).
private final class Slot: Sendable {
    private enum State {
        case waiting
        case armed(CheckedContinuation<Void, any Error>)
        case resolved(Result<Void, any Error>)
        case done
    }

    private let state = Mutex(State.waiting)
    /// Its arrival among all checks: a later one has a greater number.
    let sequence: UInt64

    init(sequence: UInt64) {
        self.sequence = sequence
    }

    func arm(_ continuation: CheckedContinuation<Void, any Error>) {
        let outcome = self.state.withLock { state -> Result<Void, any Error>? in
            switch state {
            case .waiting:
                state = .armed(continuation)
                return nil
            case .resolved(let outcome):
                state = .done
                return outcome
            case .armed, .done:
                return .failure(CancellationError())
            }
        }
        if let outcome { continuation.resume(with: outcome) }
    }

    func resolve(_ outcome: Result<Void, any Error>) {
        let continuation = self.state.withLock { state -> CheckedContinuation<Void, any Error>? in
            switch state {
            case .waiting:
                state = .resolved(outcome)
                return nil
            case .armed(let continuation):
                state = .done
                return continuation
            case .resolved, .done:
                return nil
            }
        }
        continuation?.resume(with: outcome)
    }
}

/// The continuation of one waiting check, resumed exactly once: by the worker that takes it,
/// or with `CancellationError` by a cancellation that comes first.
private final class Ticket<Value: Sendable>: Sendable {
    private enum State {
        case waiting
        case armed(CheckedContinuation<Value, any Error>)
        case taken
    }

    private let state = Mutex(State.waiting)

    /// Stores the continuation; false (having resumed it) if the task was already cancelled.
    func arm(_ continuation: CheckedContinuation<Value, any Error>) -> Bool {
        let armed = self.state.withLock { state in
            guard case .waiting = state else { return false }
            state = .armed(continuation)
            return true
        }
        if !armed { continuation.resume(throwing: CancellationError()) }
        return armed
    }

    /// The continuation, if nobody took it yet.
    func take() -> CheckedContinuation<Value, any Error>? {
        self.state.withLock { state in
            guard case .armed(let continuation) = state else { return nil }
            state = .taken
            return continuation
        }
    }

    /// Resumes the continuation with `CancellationError` unless a worker took it.
    func cancel() {
        let continuation = self.state.withLock { state -> CheckedContinuation<Value, any Error>? in
            switch state {
            case .waiting:
                state = .taken
                return nil
            case .armed(let continuation):
                state = .taken
                return continuation
            case .taken:
                return nil
            }
        }
        continuation?.resume(throwing: CancellationError())
    }
}
