import Foundation
import LabCore
import LabResults
import LabScenario
import LabTestSupport
import Testing

/// Failed iterations fail a run unless its scenario allows them with an `errors` threshold.
@Suite(.tier(.unit)) struct ImpliedErrorsTests {
    static let login = GroupKey(flow: "login", suite: "-", provider: "swift-crypto", transport: "tcp")
    static let cx = GroupKey(flow: "cx", suite: "x25519", provider: "swift-crypto", transport: "tcp")

    static func parse(_ metric: String, _ condition: String) throws -> Threshold {
        try Threshold.parse(
            metric: metric,
            condition: condition,
            flows: ["login": [.exchange], "cx": [.exchange]]
        ).get()
    }

    /// A run where every `login` iteration failed and `cx` ran clean.
    static var failedRun: RunResult {
        var failed = GroupResult(key: Self.login, flowKind: "login", insecure: false, errors: ["badRequest": 2], iterations: 2)
        failed.errorMessages = ["badRequest": "The key 'suite' is missing; expected a string"]
        let clean = GroupResult(key: Self.cx, flowKind: "cx", insecure: false, iterations: 5)
        return OutcomeTests.result([failed, clean])
    }

    @Test("A run whose iterations failed, with no thresholds, fails on the implied errors == 0")
    func noThresholdsFailsOnErrors() throws {
        var result = Self.failedRun
        result.thresholds = Threshold.outcomes([], of: result)
        #expect(!result.passed)
        let implied: ThresholdOutcome? = result.thresholds.first
        #expect(result.thresholds.count == 1)
        #expect(implied?.metric == "errors" && implied?.condition == Threshold.impliedErrorsCondition)
        #expect(implied?.observed == "2" && implied?.passed == false)
        #expect(result.errorMessagesByKind == ["badRequest": "The key 'suite' is missing; expected a string"])
    }

    @Test("An errors threshold over the failing group allows its errors; one over another group does not")
    func errorsThresholdAllows() throws {
        var result = Self.failedRun
        result.thresholds = Threshold.outcomes([try Self.parse("errors", "<= 2")], of: result)
        #expect(result.passed && result.thresholds.count == 1)
        result.thresholds = Threshold.outcomes([try Self.parse("login.errors", ">= 0")], of: result)
        #expect(result.passed && result.thresholds.count == 1)
        result.thresholds = Threshold.outcomes([try Self.parse("cx.errors", "== 0")], of: result)
        #expect(!result.passed, "an errors threshold on cx says nothing of login's errors")
        #expect(result.thresholds.map(\.condition) == ["== 0", Threshold.impliedErrorsCondition])
    }

    @Test("A clean run gets no implied threshold")
    func cleanRunPasses() {
        let clean = OutcomeTests.result([GroupResult(key: Self.cx, flowKind: "cx", insecure: false, iterations: 5)])
        #expect(Threshold.outcomes([], of: clean).isEmpty)
    }

    @Test("Merging groups keeps each error kind's first message")
    func mergeKeepsFirstMessage() {
        var first = GroupResult(key: Self.login, flowKind: "login", insecure: false, errors: ["timedOut": 1])
        first.errorMessages = ["timedOut": "first"]
        var second = GroupResult(key: Self.login, flowKind: "login", insecure: false, errors: ["timedOut": 1, "other": 1])
        second.errorMessages = ["timedOut": "second", "other": "another"]
        first.merge(second)
        #expect(first.errorMessages == ["timedOut": "first", "other": "another"])
    }
}
