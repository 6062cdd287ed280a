import LabBotan
import LabCLI
import LabOpenMetrics
import LabPlugins

// The lab's own command with a third provider and a reporter of this package's: the built-in
// catalog, and two lines.
await LabCLI.main(
    catalog: BuiltInPlugins.catalog
        .adding(provider: BotanProvider.self)
        .adding(reporter: OpenMetricsReporter.self)
)
