// LabKit: what a plugin's author imports, one module (`import LabKit`). The plugin protocols
// (LabCore: `CryptoProvider`, `Suite`, `Flow`, `Transport`, `ServedProtocol`), the scenario
// (LabScenario), what a run measured (LabResults), the property-list codec (LabWire), the
// runner (LabRunner), what compares and judges runs (LabAnalysis), the charts (LabCharts), the
// reporters and their registry (LabReport), and `PluginCatalog`, which a package's own `lab`
// hands to `LabCLI.main`.
//
// Nothing in it links OpenSSL, avahi or Argon2: the lab's own providers, DNS-SD, the messaging
// service, the socket transports and the catalog of built-in plugins are products of their
// own (docs/architecture.md, "Modules and products").
@_exported public import LabAnalysis
@_exported public import LabCharts
@_exported public import LabCore
@_exported public import LabReport
@_exported public import LabResults
@_exported public import LabRunner
@_exported public import LabScenario
@_exported public import LabWire
