import Foundation
import Histogram
import LabBuiltIns
import LabCX
import LabCore
import LabResults
import LabRunner
import LabTestSupport
import Testing

/// Outcome counts from flows to the run's groups, and the flow clients' `prepare` hook.
@Suite(.tier(.integration)) struct OutcomeRunnerTests {
    /// The built-in plugins with the counting test flow added.
    static var plugins: Plugins {
        var plugins = BuiltInPlugins.all
        plugins.flows = FlowRegistry(plugins.flows.types + [CountingFlow.self])
        return plugins
    }

    /// Runs one `counting` entry with `options` for `clients` × `iterations` (after `warmup`).
    static func run(
        clients: Int,
        iterations: Int,
        warmup: Int = 0,
        options: String = "{}",
        thresholds: String = "{}"
    ) async throws -> RunResult {
        let plan = try RunnerTests.plan(
            #"""
            { "name": "counting", "clients": { "count": \#(clients) },
              "load": { "iterations": \#(iterations), "warmupIterations": \#(warmup) },
              "flows": [ { "flow": "counting", "options": \#(options) } ],
              "thresholds": \#(thresholds) }
            """#,
            plugins: Self.plugins
        )
        return try await Runner(plan: plan).run()
    }

    @Test("Outcomes: every measured iteration's, failed ones included, set-up's too, warm-up's never")
    func outcomesReachTheGroup() async throws {
        let result = try await Self.run(clients: 2, iterations: 30, warmup: 5, options: #"{ "failEvery": 3 }"#)
        let group = try #require(result.groups.first)
        // Iterations 1…35 per client; measured are 6…35, of which 6, 9, …, 33 fail: 10 per client.
        #expect(group.iterations == 60)
        #expect(group.errors == ["signatureInvalid": 20])
        #expect(group.steps[Step("echo")]?.totalCount == 40, "failed iterations' timings are dropped")
        #expect(
            group.outcomes == [
                "attempts": 60,  // measured iterations only, failed ones included
                "refused": 20,  // counted by the failing iterations themselves
                "served": 60 + 2,  // the in-process server's counts: each measured iteration and each prepare
                "prepared": 2,  // one prepare per client
                "clients": 2,  // counted when each client was made
                "server.made": 1,  // counted when the flow was built
            ]
        )
    }

    @Test("Thresholds on outcomes: all flows, one flow, filtered, and an outcome never counted")
    func thresholdsOnOutcomes() async throws {
        let result = try await Self.run(
            clients: 1,
            iterations: 12,
            options: #"{ "failEvery": 4 }"#,
            thresholds: #"""
                { "outcomes.attempts": "== 12", "counting.outcomes.refused": "< 1",
                  "counting{transport=in-process}.outcomes.never": "== 0",
                  "counting{suite=x25519}.outcomes.attempts": ">= 1" }
                """#
        )
        let outcomes = Dictionary(uniqueKeysWithValues: result.thresholds.map { ($0.metric, $0) })
        #expect(outcomes["outcomes.attempts"]?.passed == true)
        #expect(outcomes["outcomes.attempts"]?.observed == "12")
        #expect(outcomes["counting.outcomes.refused"]?.passed == false)
        #expect(outcomes["counting.outcomes.refused"]?.observed == "3")
        #expect(outcomes["counting{transport=in-process}.outcomes.never"]?.passed == true)
        #expect(outcomes["counting{transport=in-process}.outcomes.never"]?.observed == "0")
        // No group has that suite: no data, a miss.
        #expect(outcomes["counting{suite=x25519}.outcomes.attempts"]?.observed == "no data")
        #expect(outcomes["counting{suite=x25519}.outcomes.attempts"]?.passed == false)
        #expect(!result.passed)
    }

    @Test("A failed prepare is retried by the next iteration, which fails with its error; prepare's steps are set-up")
    func failedPrepareIsRetried() async throws {
        // Prepare fails at set-up and in the first two iterations, then succeeds in the third.
        let result = try await Self.run(clients: 1, iterations: 5, options: #"{ "failedPrepares": 3 }"#)
        let group = try #require(result.groups.first)
        #expect(group.iterations == 5)
        #expect(result.completedIterations == 5)
        #expect(group.errors == ["serverError": 2])
        #expect(group.steps[.exchange]?.totalCount == 3)
        #expect(group.steps[Step("echo")]?.totalCount == 3)
        // Only the prepare that succeeded is timed, once, as set-up: not one sample per iteration.
        #expect(group.steps[Step("register")]?.totalCount == 1)
        #expect(group.outcomes["prepared"] == 4, "every call's count is kept, failed ones too")
        #expect(group.outcomes["attempts"] == 3, "iterate runs only once prepare succeeded")
    }

    @Test("A prepare that fails once at set-up costs no iteration")
    func prepareRetriedWithoutFailure() async throws {
        let result = try await Self.run(clients: 1, iterations: 5, options: #"{ "failedPrepares": 1 }"#)
        let group = try #require(result.groups.first)
        #expect(group.iterations == 5)
        #expect(group.errors.isEmpty)
        #expect(group.steps[.exchange]?.totalCount == 5)
        #expect(group.steps[Step("echo")]?.totalCount == 5)
        #expect(group.steps[Step("register")]?.totalCount == 1)
        #expect(group.outcomes["prepared"] == 2)
    }

    @Test("A prepare that succeeds runs once per client, even when failed iterations reconnect")
    func prepareRunsOncePerClient() async throws {
        let result = try await Self.run(clients: 3, iterations: 10, warmup: 2, options: #"{ "failEvery": 2 }"#)
        let group = try #require(result.groups.first)
        #expect(group.iterations == 30)
        #expect(group.errors == ["signatureInvalid": 15])
        #expect(group.outcomes["prepared"] == 3)
        #expect(group.steps[Step("register")]?.totalCount == 3)
    }
}

/// A test flow that echoes through the transport and counts outcomes: the flow `server.made`
/// when built, the client `clients` when made, `prepared` per prepare, `attempts` per iteration
/// and `refused` per scripted failure, the server `served` per request.
///
/// Its prepare records `register` and fails its first `failedPrepares` calls; its iterations
/// record `echo` and fail every `failEvery`-th (warm-up included).
struct CountingFlow: Flow {
    struct Options: Decodable, Sendable {
        var failEvery: Int
        var failedPrepares: Int
        init(from decoder: any Decoder) throws {
            let object = ScenarioObject(decoder, keys: ["failEvery", "failedPrepares"])
            self.failEvery = object.optional("failEvery", expected: "an integer") ?? 0
            self.failedPrepares = object.optional("failedPrepares", expected: "an integer") ?? 0
        }
    }

    struct Echo: FrameHandler {
        func respond<R: StepRecorder>(to body: [UInt8], recorder: inout R) async -> FrameAnswer {
            recorder.count("served")
            return FrameAnswer(body: body)
        }
    }

    struct Client: FlowClient {
        var options: Options
        var prepares = 0
        var iterations = 0

        mutating func prepare<R: StepRecorder>(over connection: any Connection, recorder: inout R) async throws {
            self.prepares += 1
            recorder.count("prepared")
            let start = Stopwatch.now()
            _ = try await connection.request([9], recorder: &recorder)
            recorder.record(Step("register"), nanoseconds: Stopwatch.now() - start)
            if self.prepares <= self.options.failedPrepares {
                throw LabError(.serverError, "scripted prepare failure")
            }
        }

        mutating func iterate<R: StepRecorder>(over connection: any Connection, recorder: inout R) async throws {
            self.iterations += 1
            recorder.count("attempts")
            let start = Stopwatch.now()
            let answer = try await connection.request([1, 2, 3], recorder: &recorder)
            recorder.record(Step("echo"), nanoseconds: Stopwatch.now() - start)
            if answer != [1, 2, 3] || (self.options.failEvery > 0 && self.iterations % self.options.failEvery == 0) {
                recorder.count("refused")
                throw CXVerdict(.signatureInvalid, "scripted failure")
            }
        }
    }

    static let name = "counting"
    static let summary = "test flow that counts outcomes"
    static let steps = [Step("register"), Step("echo"), .exchange]
    static let usesSuite = false
    let options: Options
    let suite = "-"
    let isInsecure = false
    let handler: (any FrameHandler)? = Echo()

    static func check(_ setup: FlowSetup, options: Options) -> [(path: String, message: String)] { [] }

    init<R: StepRecorder>(setup: FlowSetup, options: Options, recorder: inout R) throws {
        self.options = options
        recorder.count("server.made")
    }

    func makeClient<R: StepRecorder>(recorder: inout R) throws -> any FlowClient {
        recorder.count("clients")
        return Client(options: self.options)
    }
}
