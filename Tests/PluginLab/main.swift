import LabCLI
import LabPlugins

// Test support: the `lab` with three plugins this target defines, none of them in the lab's
// sources: a transport (`relay`), a suite (`x25519-cbc`) and a flow (`echo`), each added to
// the built-in catalog the way a package outside the lab adds its own (`PluginCLITests`).
await LabCLI.main(
    catalog: BuiltInPlugins.catalog
        .adding(transport: RelayTransport.self)
        .adding(suite: X25519CBCSuite.self)
        .adding(flow: EchoFlow.self)
)
