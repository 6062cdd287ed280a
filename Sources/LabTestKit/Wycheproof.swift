import Foundation
import LabCore

/// A Wycheproof test file, read loosely (the files' schemas differ by primitive).
public struct WycheproofFile: Sendable {
    /// A test group: its own fields and its tests.
    public struct Group: @unchecked Sendable {
        // Immutable JSON values read once; never mutated after loading.
        public let fields: [String: Any]
        public let tests: [Test]
    }

    /// One test case.
    public struct Test: @unchecked Sendable {
        public let fields: [String: Any]

        /// The test's id.
        public var id: Int { self.fields["tcId"] as? Int ?? -1 }
        /// `valid`, `invalid` or `acceptable`.
        public var result: Expectation { Expectation(rawValue: self.fields["result"] as? String ?? "") ?? .invalid }
        /// A hex field as bytes (empty if absent).
        public func bytes(_ key: String) -> [UInt8] { [UInt8](hex: self.fields[key] as? String ?? "") ?? [] }
        /// Whether a field is present.
        public func has(_ key: String) -> Bool { self.fields[key] != nil }
        /// An integer field.
        public func int(_ key: String) -> Int? { self.fields[key] as? Int }
        /// A label for failure messages.
        public var label: String { "tcId \(self.id) (\(self.fields["comment"] as? String ?? ""))" }
    }

    /// What a test expects of an implementation.
    public enum Expectation: String, Sendable {
        case valid, invalid, acceptable
    }

    /// The file's name, e.g. `aes_gcm_test.json`.
    public let name: String
    /// Its groups.
    public let groups: [Group]

    /// Reads `Tests/Vectors/wycheproof/<name>`.
    public init(_ name: String) throws {
        let url = RepositoryPaths.wycheproof.appendingPathComponent(name)
        let data = try Data(contentsOf: url)
        guard let root = try JSONSerialization.jsonObject(with: data) as? [String: Any],
            let groups = root["testGroups"] as? [[String: Any]]
        else {
            throw LabError(.malformedMessage, "\(name) is not a Wycheproof file")
        }
        self.name = name
        self.groups = groups.map { group in
            Group(fields: group, tests: (group["tests"] as? [[String: Any]] ?? []).map(Test.init(fields:)))
        }
    }

    /// How many tests the file holds.
    public var testCount: Int { self.groups.reduce(0) { $0 + $1.tests.count } }
}

extension WycheproofFile.Group {
    /// A hex field of the group as bytes (empty if absent).
    public func bytes(_ key: String) -> [UInt8] { [UInt8](hex: self.fields[key] as? String ?? "") ?? [] }
    /// A string field of the group.
    public func string(_ key: String) -> String? { self.fields[key] as? String }
    /// An integer field of the group.
    public func int(_ key: String) -> Int? { self.fields[key] as? Int }
    /// A nested object's hex field, e.g. `publicKey.pk`.
    public func bytes(_ object: String, _ key: String) -> [UInt8] {
        [UInt8](hex: (self.fields[object] as? [String: Any])?[key] as? String ?? "") ?? []
    }
}

/// What running one file on one provider gave.
public struct VectorTally: Sendable, CustomStringConvertible {
    /// The file.
    public var file: String
    /// The provider.
    public var provider: String
    /// Tests run and checked.
    public var ran = 0
    /// Tests not run, by reason (a parameter the provider does not offer).
    public var skipped: [String: Int] = [:]
    /// Tests whose outcome broke the file's expectation.
    public var failures: [String] = []

    /// An empty tally of `file` run on `provider`.
    public init(file: String, provider: String) {
        self.file = file
        self.provider = provider
    }

    /// Records a skip.
    public mutating func skip(_ reason: String) { self.skipped[reason, default: 0] += 1 }

    /// Records a check: `ok` says whether the outcome honoured the expectation.
    public mutating func check(_ ok: Bool, _ test: WycheproofFile.Test, _ detail: @autoclosure () -> String = "") {
        self.ran += 1
        if !ok {
            self.failures.append("\(test.label) expected \(test.result.rawValue) \(detail())")
        }
    }

    /// Records an operation's output (nil if it failed): valid must give `expected`,
    /// invalid must fail, acceptable may fail but must not give anything else.
    public mutating func checkOutput(_ output: [UInt8]?, expected: [UInt8], _ test: WycheproofFile.Test) {
        switch test.result {
        case .valid: self.check(output == expected, test)
        case .invalid: self.check(output == nil, test, "but the operation succeeded")
        case .acceptable: self.check(output == nil || output == expected, test)
        }
    }

    /// Records a signature check: valid must verify, invalid must not, acceptable may go either way.
    public mutating func checkVerdict(_ verifies: Bool, _ test: WycheproofFile.Test) {
        switch test.result {
        case .valid: self.check(verifies, test, "but it did not verify")
        case .invalid: self.check(!verifies, test, "but it verified")
        case .acceptable: self.check(true, test)
        }
    }

    /// Tests skipped in all.
    public var skippedCount: Int { self.skipped.values.reduce(0, +) }

    /// `provider file: ran N, failed F, skipped S (reasons)`.
    public var description: String {
        let reasons = self.skipped.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: "; ")
        return
            "\(self.provider) \(self.file): ran \(self.ran), failed \(self.failures.count), skipped \(self.skippedCount)"
            + (reasons.isEmpty ? "" : " (\(reasons))")
    }
}
