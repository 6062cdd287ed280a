import Foundation
import LabBuiltIns
import LabCore
public import LabResults
public import LabRunner

/// Scenarios written inline in tests, checked against the built-in plugins.
public enum TestPlan {
    /// Validates a scenario's JSON text; throws its problems as one `LabError`.
    public static func from(_ json: String) throws -> Plan {
        switch ScenarioValidator.validate(data: Data(json.utf8), plugins: BuiltInPlugins.all) {
        case .success(let plan): return plan
        case .failure(let errors): throw errors.labError
        }
    }

    /// Validates and runs a scenario's JSON text.
    public static func run(_ json: String) async throws -> RunResult {
        try await Runner(plan: try Self.from(json)).run()
    }
}
