import Foundation
import LabCore
public import LabResults

/// Some groups of one run, for `lab compare RUN#SELECTOR`: `#{provider=openssl}`,
/// `#cx{suite=x25519,provider=openssl}`, `#cx` (a flow label). Two selections that set a field
/// to different values are compared across that field: the candidate's groups take the
/// baseline's value of it, so that `lab compare R#{provider=swift-crypto} R#{provider=openssl}`
/// matches each suite on one provider with the same suite on the other, as the run's own
/// report does (`InRunComparison`).
public struct GroupSelection: Sendable, Equatable {
    /// The flow label, if the selector names one.
    public var flow: String?
    /// `suite`, `provider` and `transport` filters.
    public var filters: [String: String]

    /// The selector's keys.
    public static let keys = ["suite", "provider", "transport"]

    /// A selection of `flow` (if any) and `filters`.
    public init(flow: String?, filters: [String: String]) {
        self.flow = flow
        self.filters = filters
    }

    /// Splits `argument` into its path and its selector (after the last `#`), nil without one.
    public static func split(_ argument: String) throws -> (path: String, selection: GroupSelection?) {
        guard let hash = argument.lastIndex(of: "#") else { return (argument, nil) }
        let selector = String(argument[argument.index(after: hash)...])
        return (String(argument[..<hash]), try GroupSelection(parsing: selector))
    }

    /// Parses `FLOW`, `{key=value,…}` or `FLOW{key=value,…}`.
    public init(parsing selector: String) throws {
        func problem(_ text: String) -> LabError {
            LabError(
                .invalidScenario,
                "the group selector '#\(selector)' \(text): expected '#FLOW', '#{key=value,…}' or '#FLOW{key=value,…}'"
                    + " with keys \(Self.keys.joined(separator: ", "))"
            )
        }
        var flow = Substring(selector)
        var filters: [String: String] = [:]
        if let open = selector.firstIndex(of: "{") {
            guard selector.hasSuffix("}") else { throw problem("has no closing '}'") }
            flow = selector[..<open]
            let body = selector[selector.index(after: open)..<selector.index(before: selector.endIndex)]
            for pair in body.split(separator: ",", omittingEmptySubsequences: false) {
                let parts = pair.split(separator: "=", maxSplits: 1).map {
                    String($0).trimmingCharacters(in: .whitespaces)
                }
                guard parts.count == 2, Self.keys.contains(parts[0]), !parts[1].isEmpty else {
                    throw problem("has '\(pair)'")
                }
                filters[parts[0]] = parts[1]
            }
        }
        guard !flow.isEmpty || !filters.isEmpty else { throw problem("is empty") }
        self.flow = flow.isEmpty ? nil : String(flow)
        self.filters = filters
    }

    /// Whether `key` is selected.
    public func matches(_ key: GroupKey) -> Bool {
        if let flow = self.flow, key.flow != flow { return false }
        return self.filters.allSatisfy { field, value in Self.value(of: key, field) == value }
    }

    /// `result` with only the client groups selected; throws, listing the run's groups, when
    /// none is.
    public func apply(to result: RunResult, label: String) throws -> RunResult {
        var selected = result
        selected.groups = result.groups.filter { !$0.isServerSide && self.matches($0.key) }
        guard !selected.groups.isEmpty else {
            let groups = result.groups.filter { !$0.isServerSide }.map { "    \($0.key)" }
            throw LabError(
                .invalidScenario,
                (["the selector \(self) matches none of '\(label)''s groups:"] + groups).joined(separator: "\n")
            )
        }
        return selected
    }

    /// The candidate's groups renamed to the baseline group each stands for: the one alike in
    /// every field but those the two selections set differently, whatever its flow label (a
    /// label is made of the suite and providers unless the flow entry names itself). A group
    /// with no such baseline group, or more than one, keeps its key.
    public static func align(
        _ candidate: RunResult,
        _ selection: GroupSelection,
        to baseline: RunResult,
        _ baselineSelection: GroupSelection
    ) -> RunResult {
        let across = Set(Self.across([baselineSelection, selection]))
        var aligned = candidate
        for index in aligned.groups.indices {
            let key = aligned.groups[index].key
            let alike = baseline.groups.filter { other in
                Self.keys.allSatisfy { across.contains($0) || Self.value(of: other.key, $0) == Self.value(of: key, $0) }
                    && other.flowKind == aligned.groups[index].flowKind
            }
            if alike.count == 1 { aligned.groups[index].key = alike[0].key }
        }
        return aligned
    }

    /// The fields every selection sets, not all to one value: those compared across.
    public static func across(_ selections: [GroupSelection?]) -> [String] {
        Self.keys.filter { field in
            let values = selections.map { $0?.filters[field] }
            return values.allSatisfy { $0 != nil } && Set(values.compactMap { $0 }).count > 1
        }
    }

    static func value(of key: GroupKey, _ field: String) -> String {
        switch field {
        case "suite": key.suite
        case "provider": key.provider
        default: key.transport
        }
    }
}

extension GroupSelection: CustomStringConvertible {
    /// `#cx{provider=openssl}`.
    public var description: String {
        let filters = Self.keys.compactMap { key in self.filters[key].map { "\(key)=\($0)" } }
        return "#" + (self.flow ?? "") + (filters.isEmpty ? "" : "{\(filters.joined(separator: ","))}")
    }
}
