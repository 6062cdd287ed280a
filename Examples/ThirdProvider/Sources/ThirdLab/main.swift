import LabBotan
import LabCLI
import LabDerive
import LabOpenMetrics
import LabBuiltIns

// The lab's own command with a third provider, a reporter, and a flow with its served
// protocol, all of this package's: the built-in catalog, and a line each.
await LabCLI.main(
    catalog: BuiltInPlugins.catalog
        .adding(provider: BotanProvider.self)
        .adding(reporter: OpenMetricsReporter.self)
        .adding(flow: DeriveFlow.self)
        .adding(served: DeriveProtocol.self)
)
