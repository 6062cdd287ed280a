import Foundation
import LabBuiltIns
import LabCore
import LabRunner
import LabTestSupport
import Testing

/// A matrix's `"exclude"` (combinations it leaves out), what is said of an impossible
/// combination not excluded, and the labels of a matrix's entries.
@Suite(.tier(.unit)) struct MatrixExcludeTests {
    /// The problems of a scenario whose flows are `flows` (a JSON array), as `lab validate` prints them.
    static func problems(_ flows: String) -> [String] {
        let json = #"{"name": "m", "server": {"provider": "swift-crypto"}, "flows": "# + flows + "}"
        switch ScenarioValidator.validate(data: Data(json.utf8), plugins: BuiltInPlugins.all) {
        case .success: return []
        case .failure(let errors): return errors.problems.map(\.description)
        }
    }

    static func labels(_ flows: String) throws -> [String] {
        try TestPlan.from(#"{"name": "m", "server": {"provider": "swift-crypto"}, "flows": "# + flows + "}")
            .flows.map(\.label)
    }

    static let suitesTimesProviders = #"{"suite": ["x25519", "pq"], "provider": ["openssl", "swift-crypto"]"#

    @Test("exclude leaves out every combination with its values; the rest keep their order")
    func excludeLeavesOut() throws {
        let flows = #"[{"flow": "cx", "matrix": "# + Self.suitesTimesProviders
            + #", "exclude": [{"suite": "pq", "provider": "openssl"}]}}]"#
        #expect(try Self.labels(flows) == ["cx-x25519-openssl", "cx-x25519-swift-crypto", "cx-pq-swift-crypto"])
        // A partial combination leaves out all that have its values, whatever the other keys.
        let partial = #"[{"flow": "cx", "matrix": {"suite": ["x25519", "pq"], "options.payloadBytes": [427, 4096], "#
            + #""exclude": [{"options.payloadBytes": 4096}]}}]"#
        #expect(try Self.labels(partial) == ["cx-x25519-427", "cx-pq-427"])
    }

    @Test("An impossible combination not excluded is a problem naming it and the exclude that leaves it out")
    func impossibleCombinationSuggestsExclude() {
        let problems = Self.problems(#"[{"flow": "cx", "matrix": "# + Self.suitesTimesProviders + "}}]")
        #expect(problems.count == 1, "\(problems)")
        let problem = problems.first ?? ""
        #expect(problem.hasPrefix("$.flows[0][suite=pq,provider=openssl].provider: The openssl provider cannot do suite 'pq'"))
        #expect(
            problem.hasSuffix(
                #"To leave this combination out, add it to "exclude" in $.flows[0].matrix: "#
                    + #""exclude": [{"suite": "pq", "provider": "openssl"}]"#
            ),
            "\(problem)"
        )
    }

    @Test("An exclude naming a key or value the matrix lacks is a problem at its path, with a \"did you mean\"")
    func excludeIsChecked() {
        let flows = #"[{"flow": "cx", "matrix": {"suite": ["x25519", "rsa-modern"], "provider": ["openssl", "swift-crypto"]"#
            + #", "exclude": [{"suite": "x25519", "provder": "openssl"}, {"provider": "opensll"}, {"suite": "classic"}, {}]}}]"#
        #expect(
            Self.problems(flows) == [
                #"$.flows[0].matrix.exclude[0].provder: the matrix has no key 'provder' (did you mean 'provider'?); its keys: suite, provider"#,
                #"$.flows[0].matrix.exclude[1].provider: "opensll" is not one of the matrix's values of 'provider' (did you mean 'openssl'?); they are: openssl, swift-crypto"#,
                #"$.flows[0].matrix.exclude[2].suite: "classic" is not one of the matrix's values of 'suite'; they are: x25519, rsa-modern"#,
                #"$.flows[0].matrix.exclude[3]: expected an object of matrix keys → one value each, such as {"suite": "pq", "provider": "openssl"}, found {}"#,
            ]
        )
        let everything = #"[{"flow": "cx", "matrix": {"suite": ["x25519"], "exclude": [{"suite": "x25519"}]}}]"#
        #expect(
            Self.problems(everything) == [
                "$.flows[0].matrix.exclude: expected the exclusions to leave at least one of the matrix's 1 combinations; they leave none"
            ]
        )
        #expect(Self.problems(#"[{"flow": "cx", "matrix": {"suite": ["pq"], "exclude": []}}]"#).count == 1)
    }

    @Test("A matrix's labels name every key that varies between the flow's entries, the suite too")
    func labelsNameWhatVaries() throws {
        // The suite is the entry's own, but it differs from the other entry's: the labels say so.
        let flows = #"[{"flow": "cx", "suite": "x25519", "matrix": {"provider": ["openssl", "swift-crypto"]}}, "#
            + #"{"flow": "cx", "suite": "pq"}]"#
        #expect(try Self.labels(flows) == ["cx-x25519-openssl", "cx-x25519-swift-crypto", "cx-pq"])
        // Alone, an entry's fixed suite sets nothing apart: the matrix's keys alone.
        let alone = #"[{"flow": "cx", "suite": "x25519", "matrix": {"provider": ["openssl", "swift-crypto"]}}]"#
        #expect(try Self.labels(alone) == ["cx-openssl", "cx-swift-crypto"])
        // A name of the user's own is kept, with the matrix's values.
        let named = #"[{"flow": "cx", "name": "fast", "suite": "x25519", "matrix": {"provider": ["openssl"]}}, "#
            + #"{"flow": "cx", "suite": "pq"}]"#
        #expect(try Self.labels(named) == ["fast-openssl", "cx-pq"])
    }
}
