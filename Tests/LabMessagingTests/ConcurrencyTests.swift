import Foundation
import LabCore
import LabMessaging
import LabTestSupport
import LabTransports
import LabWire
import Synchronization
import Testing

/// 100 wrong passwords at once on one account, over real sockets: the counters must end
/// exactly where the policy says, with no update lost and none counted past the gate.
@Suite(.tier(.load), .serialized) struct ConcurrencyTests {
    static let attempts = 100

    @Test(arguments: [LockoutPolicy.seedDefault, LockoutPolicy.default])
    func concurrentWrongPasswordsLoseNoUpdate(policy: LockoutPolicy) async throws {
        // A KDF slow enough (a few ms) that the attempts overlap while it runs, on four
        // workers, with room for every attempt to wait for one (none is answered busy).
        let harness = try await Harness(
            kdf: .pbkdf2SHA256(iterations: 20_000),
            policy: policy,
            kdfWorkers: 4,
            kdfQueueLimit: Self.attempts
        )
        let endpoint = try await TCPTransport(options: TransportOptions()).serve(harness.service)
        try await withEndpoint(endpoint) { endpoint in
            var quiet = NoStepRecorder()
            var owner = MessagingUser(username: "target", password: "correct horse")
            let setupClient = MessagingClient(connection: try await endpoint.connect(recorder: &quiet))
            try await owner.register(setupClient, recorder: &quiet).orThrow()

            let codes = try await Self.wrongPasswordsAtOnce(Self.attempts, on: "target") {
                MessagingClient(connection: try await endpoint.connect(recorder: &quiet))
            }
            let counted = codes.filter { $0 == .badCredentials }.count
            // Every attempt came from 127.0.0.1: under throttle, that source's state.
            let state = try #require(try await harness.state("target", from: FramePeer(source: "127.0.0.1")))
            let now = harness.clock.now()
            if let seed = policy.rules as? SeedPolicy {
                // Exactly the failures up to the postponement count; the rest are refused unchecked.
                #expect(counted == seed.postponeAfter)
                #expect(
                    state
                        == LoginState(failures: seed.postponeAfter, postponedUntil: now.addingTimeInterval(seed.postponeFor))
                )
            } else {
                let throttle = try #require(policy.rules as? ThrottlePolicy)
                #expect(counted == throttle.freeFailures + 1)
                #expect(
                    state
                        == LoginState(
                            failures: throttle.freeFailures + 1,
                            postponedUntil: now.addingTimeInterval(throttle.delay)
                        )
                )
            }
            #expect(codes.filter { $0 == .postponed }.count == Self.attempts - counted)
            #expect(codes.allSatisfy { $0 == .badCredentials || $0 == .postponed })
            await setupClient.connection.close()
        }
    }

    /// `count` logins with a wrong password on `username`, each on its own connection from
    /// `connect`; every attacker gets its captcha first, so that the logins start together.
    /// Returns each answer's error code (nil for a login that succeeded).
    static func wrongPasswordsAtOnce(
        _ count: Int,
        on username: String,
        connect: () async throws -> MessagingClient
    ) async throws -> [MsgErrorCode?] {
        var quiet = NoStepRecorder()
        var prepared: [(MessagingClient, MessagingUser, IssuedCaptcha)] = []
        for _ in 0..<count {
            let client = try await connect()
            var attacker = MessagingUser(username: username, password: "wrong password")
            let captcha = try await attacker.solveCaptcha(client, recorder: &quiet)
            prepared.append((client, attacker, captcha))
        }
        return try await withThrowingTaskGroup(of: MsgErrorCode?.self) { group in
            for (client, attacker, captcha) in prepared {
                group.addTask {
                    var attacker = attacker
                    var quiet = NoStepRecorder()
                    let answer = try await attacker.login(client, captcha: captcha, recorder: &quiet)
                    await client.connection.close()
                    return answer.failureCode
                }
            }
            var codes: [MsgErrorCode?] = []
            for try await code in group { codes.append(code) }
            return codes
        }
    }
}

/// Password checks run off the event loops, a bounded number at once: beyond the queue, a
/// check is refused `busy` at once, and through the service it counts nothing.
@Suite(.tier(.load), .serialized) struct PasswordCheckLimitTests {
    @Test("with its worker busy and its queue full, the next check is refused busy at once")
    func checksBeyondTheQueueAreBusy() async throws {
        let checks = PasswordChecks(workers: 1, queueLimit: 2)
        let gate = DispatchSemaphore(value: 0)
        // One running (held at the gate) and two waiting.
        let held = (0..<3).map { index in
            Task {
                try await checks.run { () -> Int in
                    gate.wait()
                    return index
                }
            }
        }
        try await withDeadline(.seconds(30), "3 checks admitted") { await checks.admitted { $0 >= 3 } }
        try #require(checks.admitted == 3)
        let refused = try await #require(throws: MsgFailure.self) { _ = try await checks.run { 0 } }
        #expect(refused.code == .busy)
        for _ in 0..<3 { gate.signal() }
        var finished: [Int] = []
        for task in held { finished.append(try await task.value.0) }
        #expect(finished.sorted() == [0, 1, 2])
        #expect(checks.admitted == 0)
        // Room again.
        #expect(try await checks.run { 7 }.0 == 7)
    }

    @Test("checks running on every worker, as many as cores, leave the process's async work running")
    func checksLeaveTheSharedThreads() async throws {
        // Each check spins (a KDF is CPU-bound: nothing for the dispatch pool to see as
        // blocked) until an async task sets `released`; that task is started by the last
        // check to begin. A pool on the shared dispatch threads (one per core on Linux, where
        // Swift's tasks run too) leaves that task no thread: each spin runs out its bound.
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let checks = PasswordChecks(workers: cores, queueLimit: 0)
        final class Flags: Sendable {
            let released = Atomic<Bool>(false)
            let started = Atomic<Int>(0)
        }
        let flags = Flags()
        let (allStarted, signal) = AsyncStream.makeStream(of: Void.self)
        let releaser = Task {
            for await _ in allStarted { break }
            flags.released.store(true, ordering: .releasing)
        }
        let spins = (0..<cores).map { _ in
            Task {
                try await checks.run { () -> Bool in
                    if flags.started.add(1, ordering: .acquiringAndReleasing).newValue == cores { signal.yield() }
                    let bound = Stopwatch.now() + 30_000_000_000
                    while !flags.released.load(ordering: .acquiring) {
                        if Stopwatch.now() > bound { return false }
                    }
                    return true
                }
            }
        }
        try await withDeadline(.seconds(90), "\(cores) checks ended") {
            for spin in spins {
                let released = try await spin.value.0
                #expect(released, "an async task ran while every worker spun")
            }
        }
        await releaser.value
    }

    /// Issue 37, break 2: one source's checks fill the queue; another source's check takes
    /// the newest of their places (that one is refused busy) and is served next, before the
    /// first source's older waiters: round robin between sources.
    @Test("a full queue of one source's checks still takes another source's check, served next")
    func sourcesShareTheQueueFairly() async throws {
        let checks = PasswordChecks(workers: 1, queueLimit: 4)
        let gate = DispatchSemaphore(value: 0)
        final class Order: Sendable {
            let names = Mutex<[String]>([])
        }
        let order = Order()
        func check(_ source: String, _ name: String) -> Task<Void, any Error> {
            Task { @Sendable in
                _ = try await checks.run(source: source) {
                    gate.wait()
                    order.names.withLock { $0.append(name) }
                }
            }
        }
        // The flood: one running, four waiting, each admitted before the next is sent.
        var flood: [Task<Void, any Error>] = []
        for index in 0..<5 {
            flood.append(check("flood", "flood\(index)"))
            try await withDeadline(.seconds(30), "flood check \(index) admitted") {
                await checks.admitted { $0 > index }
            }
        }
        #expect(checks.waiting(from: "flood") == 4)
        // The flood's next check is refused: its source has every place.
        let refused = try await #require(throws: MsgFailure.self) { _ = try await checks.run(source: "flood") { 0 } }
        #expect(refused.code == .busy)
        // The owner's check takes the flood's newest place.
        let owner = check("owner", "owner")
        // The flood's newest is refused in the same step as the owner's check is queued.
        let newest = flood[4]
        let outcome = try await withDeadline(.seconds(30), "the flood's newest check refused") {
            await newest.result
        }
        #expect(throws: MsgFailure.self) { try outcome.get() }
        #expect(checks.waiting(from: "flood") == 3 && checks.waiting(from: "owner") == 1)
        for _ in 0..<5 { gate.signal() }
        try await owner.value
        for task in flood.prefix(4) { try await task.value }
        // flood0 was running; then the sources take turns: flood1, owner, then the rest.
        #expect(order.names.withLock { $0 } == ["flood0", "flood1", "owner", "flood2", "flood3"])
    }

    /// Issue 51, break 1: many sources, one waiting check each, fill the queue. Compared
    /// address by address alone, no source had two more than a newcomer's none, so nobody
    /// gave a place up and a new source was refused `busy` (the trial: the owner's 8 logins
    /// `busy` 7 times with 66 attacker addresses). Compared network by network, a source
    /// outside the flood's /16 (or IPv6 /32) takes a place from it; one inside the flood's
    /// /24, where every address has as many waiting as it, does not.
    @Test("a queue full of many sources' one check each still takes a source from another network")
    func manySourcesGiveUpPlacesToAnotherNetwork() async throws {
        let checks = PasswordChecks(workers: 1, queueLimit: 8)
        let gate = DispatchSemaphore(value: 0)
        func check(_ source: String) -> Task<Void, any Error> {
            Task { @Sendable in _ = try await checks.run(source: source) { gate.wait() } }
        }
        // Nine addresses of one /24: one running, eight waiting, one check each.
        var flood: [Task<Void, any Error>] = []
        for index in 0..<9 {
            flood.append(check("10.0.0.\(index + 1)"))
            try await withDeadline(.seconds(30), "flood check \(index) admitted") { await checks.admitted { $0 > index } }
        }
        // A tenth address of the same /24 is refused: every address there has one waiting.
        let neighbour = try await #require(throws: MsgFailure.self) { _ = try await checks.run(source: "10.0.0.200") { 0 } }
        #expect(neighbour.code == .busy)
        // A source of another /16 takes a place, then an IPv6 one: the flood's /16 still has
        // more than one more waiting than theirs. Each takes the newest flood check's place.
        var owners = [check("10.1.0.1")]
        let (eighth, ninth) = (flood[7], flood[8])
        let newest = try await withDeadline(.seconds(30), "the newest flood check refused") { await ninth.result }
        #expect((try? newest.get()) == nil)
        owners.append(check("2001:db8:1:2::/64"))
        let next = try await withDeadline(.seconds(30), "the next newest refused") { await eighth.result }
        #expect((try? next.get()) == nil)
        #expect(checks.waiting(from: "10.1.0.1") == 1 && checks.waiting(from: "2001:db8:1:2::/64") == 1)
        #expect(checks.admitted == 9, "the queue stays at its limit")
        for _ in 0..<9 { gate.signal() }
        for owner in owners { try await owner.value }
        for task in flood.prefix(7) { try await task.value }
    }

    @Test("admitted(where:) wakes a waiter registered before the count changes, up and down")
    func admissionWakesWaiters() async throws {
        let checks = PasswordChecks(workers: 1, queueLimit: 2)
        // Waits for `condition`, telling `registered` when it was first looked at: the
        // waiter is registered (under the pool's lock) before the count can change.
        func waiter(_ condition: @escaping @Sendable (Int) -> Bool) async -> Task<Void, Never> {
            let (registered, seen) = AsyncStream.makeStream(of: Void.self)
            let task = Task {
                await checks.admitted { count in
                    seen.yield()
                    return condition(count)
                }
            }
            for await _ in registered { break }
            return task
        }
        let gate = DispatchSemaphore(value: 0)
        let up = await waiter { $0 >= 1 }
        let running = Task { try await checks.run { gate.wait() } }
        try await withDeadline(.seconds(30), "woken by the check's admission") { await up.value }
        let down = await waiter { $0 == 0 }
        gate.signal()
        _ = try await running.value
        try await withDeadline(.seconds(30), "woken by the check's end") { await down.value }
        #expect(checks.admitted == 0)
    }

    @Test("a waiting check whose task is cancelled is dropped at once, and its work never runs")
    func cancelledWaitingCheckIsDropped() async throws {
        let checks = PasswordChecks(workers: 1, queueLimit: 2)
        let gate = DispatchSemaphore(value: 0)
        // The worker is held before the second check is queued (else that one could take the
        // worker first and finish: the old polling version had that race too).
        let (started, begin) = AsyncStream.makeStream(of: Void.self)
        let running = Task {
            try await checks.run { () -> Int in
                begin.yield()
                gate.wait()
                return 1
            }
        }
        for await _ in started { break }
        let ran = Mutex(false)
        let waiting = Task {
            try await checks.run { () -> Int in
                ran.withLock { $0 = true }
                return 2
            }
        }
        try await withDeadline(.seconds(30), "2 checks admitted") { await checks.admitted { $0 >= 2 } }
        try #require(checks.admitted == 2)
        var opened = false
        defer { if !opened { gate.signal() } }
        waiting.cancel()
        // Dropped while the worker is still held at the gate (without the drop, it would wait
        // there for ever: hence a deadline, not an await on the task).
        try await withDeadline(.seconds(30), "the cancelled check dropped") { await checks.admitted { $0 <= 1 } }
        try #require(checks.admitted == 1, "the cancelled check still waits for the worker")
        await #expect(throws: CancellationError.self) { _ = try await waiting.value }
        opened = true
        gate.signal()
        #expect(try await running.value.0 == 1)
        // The worker is free: anything queued before this check has run or been dropped.
        #expect(try await checks.run { 3 }.0 == 3)
        #expect(ran.withLock { $0 } == false, "the cancelled check's work ran")
    }

    @Test("logins refused busy count nothing; once there is room, the same logins are checked and counted")
    func busyLoginsCountNothing() async throws {
        let harness = try await Harness(
            kdf: .pbkdf2SHA256(iterations: 1_000),
            policy: .default,
            kdfWorkers: 1,
            kdfQueueLimit: 2
        )
        // Twelve accounts, one wrong login each, on connections of their own.
        let names = (0..<12).map { "target-\($0)" }
        var quiet = NoStepRecorder()
        var clients: [MessagingClient] = []
        for name in names {
            var owner = MessagingUser(username: name, password: "correct horse")
            let client = try await harness.client()
            try await owner.register(client, recorder: &quiet).orThrow()
            clients.append(client)
        }
        func wrongLogins() async throws -> [String: MsgErrorCode?] {
            try await withThrowingTaskGroup(of: (String, MsgErrorCode?).self) { group in
                for (name, client) in zip(names, clients) {
                    group.addTask {
                        var attacker = MessagingUser(username: name, password: "wrong password")
                        var quiet = NoStepRecorder()
                        let captcha = try await attacker.solveCaptcha(client, recorder: &quiet)
                        return (name, try await attacker.login(client, captcha: captcha, recorder: &quiet).failureCode)
                    }
                }
                var codes: [String: MsgErrorCode?] = [:]
                for try await (name, code) in group { codes[name] = code }
                return codes
            }
        }
        // The pool's one worker held at a gate and its queue of two full: every login is
        // refused busy, and no account counts a failure.
        let checks = harness.service.passwordChecks
        let gate = DispatchSemaphore(value: 0)
        // From the logins' own source (in process): a queue that another source filled would
        // give them a place (fairness between sources, tested on its own).
        let held = (0..<3).map { _ in Task { try await checks.run(source: FramePeer.inProcess.source) { gate.wait() } } }
        try await withDeadline(.seconds(30), "the pool full") { await checks.admitted { $0 >= 3 } }
        let refused = try await wrongLogins()
        for _ in held { gate.signal() }
        for task in held { _ = try await task.value }
        #expect(refused.count == 12 && refused.values.allSatisfy { $0 == .busy }, "codes: \(refused)")
        for name in names {
            #expect(try #require(try await harness.state(name)).failures == 0, "\(name) counted a busy login")
        }
        // With room again, one at a time: each is checked and counted once.
        for name in names {
            var attacker = MessagingUser(username: name, password: "wrong password")
            let client = clients[names.firstIndex(of: name)!]
            let captcha = try await attacker.solveCaptcha(client, recorder: &quiet)
            #expect(try await attacker.login(client, captcha: captcha, recorder: &quiet).failureCode == .badCredentials)
            #expect(try #require(try await harness.state(name)).failures == 1, "\(name)")
        }
    }
}

extension PasswordCheckLimitTests {
    @Test("a login refused busy leaves its captcha usable (busy changes nothing): the same answer logs in later")
    func busyKeepsTheCaptcha() async throws {
        let harness = try await Harness(
            kdf: .pbkdf2SHA256(iterations: 1_000),
            policy: .default,
            kdfWorkers: 1,
            kdfQueueLimit: 2
        )
        var quiet = NoStepRecorder()
        var user = MessagingUser(username: "captcha-keeper", password: "correct horse")
        let client = try await harness.client()
        try await user.register(client, recorder: &quiet).orThrow()
        let captcha = try await user.solveCaptcha(client, recorder: &quiet)
        // The pool's one worker held and its queue full: the login is refused busy.
        let checks = harness.service.passwordChecks
        let gate = DispatchSemaphore(value: 0)
        // From the logins' own source (in process): a queue that another source filled would
        // give them a place (fairness between sources, tested on its own).
        let held = (0..<3).map { _ in Task { try await checks.run(source: FramePeer.inProcess.source) { gate.wait() } } }
        try await withDeadline(.seconds(30), "the pool full") { await checks.admitted { $0 >= 3 } }
        let refused = try await user.login(client, captcha: captcha, recorder: &quiet)
        for _ in held { gate.signal() }
        for task in held { _ = try await task.value }
        #expect(refused.failureCode == .busy)
        // The same captcha, answered again: the login goes through.
        let again = try await user.login(client, captcha: captcha, recorder: &quiet)
        #expect(again.failureCode == nil, "\(again)")
        // Used now: a third time is refused.
        #expect(try await user.login(client, captcha: captcha, recorder: &quiet).failureCode == .badCaptcha)
    }
}

/// One password check per account at a time: logins that arrive while the account is being
/// checked wait their turn (no worker, no place in the queue) and read its state then.
@Suite(.tier(.load), .serialized, .timeLimit(.minutes(1))) struct AccountTurnsTests {
    /// Counts the KDF runs of one request.
    struct KDFCounter: StepRecorder {
        var runs = 0
        mutating func record(_ step: Step, nanoseconds: UInt64) {
            if step == .kdf { self.runs += 1 }
        }
    }

    @Test(
        "100 wrong passwords at once on one account, one KDF worker: only the counted failures run a KDF; the rest are refused at once",
        arguments: [LockoutPolicy.seedDefault, LockoutPolicy.default]
    )
    func waitingLoginsAreRefusedWithoutAKDF(policy: LockoutPolicy) async throws {
        // As lab serve on 2 cores: one worker, a queue of 64.
        let harness = try await Harness(
            kdf: .scrypt(logN: 10, r: 8, p: 1),
            policy: policy,
            kdfWorkers: 1,
            kdfQueueLimit: 64
        )
        _ = try await harness.registered("target")
        let service = harness.service
        var quiet = NoStepRecorder()
        var bodies: [[UInt8]] = []
        for _ in 0..<ConcurrencyTests.attempts {
            let captcha = try await (try await harness.client()).captcha(recorder: &quiet)
            var request = PropertyListDictionary()
            ReferenceTests.login(
                &request,
                username: "target",
                sealed: try ReferenceTests.sealedLogin(Array("wrong password".utf8), "target", captcha),
                captcha: captcha
            )
            bodies.append(try request.encoded())
        }
        let answers = await withTaskGroup(of: (String?, Int).self) { group in
            for body in bodies {
                group.addTask {
                    var counter = KDFCounter()
                    let answer = await service.respond(to: body, recorder: &counter)
                    let code = try? PropertyListDictionary(decoding: answer.body).optionalString(MsgKey.error)
                    return (code, counter.runs)
                }
            }
            var answers: [(String?, Int)] = []
            for await answer in group { answers.append(answer) }
            return answers
        }
        let throttle = policy.rules as? ThrottlePolicy
        let counted = try throttle.map { $0.freeFailures + 1 } ?? #require(policy.rules as? SeedPolicy).postponeAfter
        let codes = answers.map(\.0)
        #expect(codes.filter { $0 == MsgErrorCode.badCredentials.rawValue }.count == counted, "\(codes)")
        #expect(
            codes.filter { $0 == MsgErrorCode.postponed.rawValue }.count == ConcurrencyTests.attempts - counted,
            "\(codes)"
        )
        #expect(answers.map(\.1).reduce(0, +) == counted, "KDF runs")
        // Each KDF run was a counted failure's own.
        #expect(answers.allSatisfy { ($0.0 == MsgErrorCode.badCredentials.rawValue) == ($0.1 == 1) })
        #expect(try await harness.state("target")?.failures == counted)
    }

    @Test(
        "with one check running and the account's waiting room full, the next is refused busy at once; the rest go in order"
    )
    func waitersBeyondTheLimitAreBusy() async throws {
        let (queued, queue) = AsyncStream.makeStream(of: Int64.self)
        let turns = AccountTurns(waitLimit: 2, onWait: { queue.yield($0) })
        try await turns.acquire(7)
        let order = Arrivals()
        var events = queued.makeAsyncIterator()
        var waiters: [Task<Void, any Error>] = []
        for index in 1...2 {
            waiters.append(
                Task { @Sendable in
                    try await turns.acquire(7)
                    order.add(index)
                    turns.release(7)
                }
            )
            // Queued before the next one starts: the order of arrival is known.
            #expect(await events.next() == 7)
        }
        #expect(turns.waiting(for: 7) == 2)
        let refused = try await #require(throws: MsgFailure.self) { try await turns.acquire(7) }
        #expect(refused.code == .busy)
        // Another account is not held up.
        try await turns.acquire(8)
        turns.release(8)
        #expect(order.all.isEmpty, "a waiter ran while the turn was held")
        turns.release(7)
        for waiter in waiters { try await Self.value(of: waiter) }
        #expect(order.all == [1, 2], "not first come, first served")
        #expect(turns.accounts == 0, "a lane outlived its last check")
    }

    /// Awaits `task`, cancelling it if this test is cancelled (its time limit): a turn never
    /// handed over fails the test instead of hanging it.
    static func value(of task: Task<Void, any Error>) async throws {
        try await withTaskCancellationHandler {
            try await task.value
        } onCancel: {
            task.cancel()
        }
    }

    /// Who got the turn, in order.
    final class Arrivals: Sendable {
        private let list = Mutex<[Int]>([])
        func add(_ index: Int) { self.list.withLock { $0.append(index) } }
        var all: [Int] { self.list.withLock { $0 } }
    }

    @Test("a waiting check whose task is cancelled leaves the queue; the turn passes on to the next")
    func cancelledWaiterIsSkipped() async throws {
        let (queued, queue) = AsyncStream.makeStream(of: Int64.self)
        let turns = AccountTurns(waitLimit: 4, onWait: { queue.yield($0) })
        try await turns.acquire(1)
        let cancelled = Task { try await turns.acquire(1) }
        var events = queued.makeAsyncIterator()
        _ = await events.next()
        let next = Task {
            try await turns.acquire(1)
            turns.release(1)
        }
        _ = await events.next()
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        // Out of the account's waiting room at once, not when the turn would have reached it.
        #expect(turns.waiting(for: 1) == 1, "the cancelled check still takes a place")
        turns.release(1)
        try await Self.value(of: next)
        #expect(turns.accounts == 0)
    }
}
