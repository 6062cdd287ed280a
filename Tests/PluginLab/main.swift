import LabBuiltIns
import LabCLI
import LabKit

// Test support: the `lab` with plugins this target defines, none of them in the lab's
// sources: a transport (`relay`), a suite (`x25519-cbc`), a flow (`echo`) and one of each of
// msg/1's kinds (`test-kdf`, `lock-at`, `fixed`, `late`), each added to the built-in catalog
// the way a package outside the lab adds its own (`PluginCLITests`).
await LabCLI.main(
    catalog: BuiltInPlugins.catalog
        .adding(transport: RelayTransport.self)
        .adding(suite: X25519CBCSuite.self)
        .adding(flow: EchoFlow.self)
        .adding(kdf: TestKDF.self)
        .adding(policy: LockAtPolicy.self)
        .adding(captcha: FixedCaptcha.self)
        .adding(clock: LateClock.self)
)
