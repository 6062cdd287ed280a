import LabBuiltIns
import LabCLI

// `lab`: the command line with the plugins that ship with the lab. A package that adds its
// own plugins builds the same command with its catalog (docs/architecture.md).
await LabCLI.main(catalog: BuiltInPlugins.catalog)
