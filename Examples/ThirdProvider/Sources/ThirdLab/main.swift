import LabBotan
import LabBuiltIns
import LabCLI
import LabDerive
import LabOpenMetrics

// The lab's own command with a third provider, a reporter, and a flow with the protocol its
// `lab serve` serves it with, all of this package's: the built-in catalog, each one added.
let catalog = BuiltInPlugins.catalog.adding(provider: BotanProvider.self).adding(reporter: OpenMetricsReporter.self)
await LabCLI.main(catalog: catalog.adding(flow: DeriveFlow.self).adding(served: DeriveProtocol.self))
