public import LabKit
public import LabMessaging

extension PluginCatalog {
    /// msg/1's KDFs, lockout policies, captchas and clocks: what messaging flows' options,
    /// stored hashes, `lab serve`'s msg/1 options, `lab list` and `lab schema` read.
    public var messagingKinds: MessagingKinds { self.plugins.extensions[MessagingKinds.self] }

    /// This catalog with one more msg/1 password KDF (its name must be new).
    public func adding(kdf: any PasswordKDFPlugin.Type) -> PluginCatalog {
        self.with(self.messagingKinds.adding(kdf: kdf))
    }

    /// This catalog with one more msg/1 lockout policy (its name must be new).
    public func adding(policy: any LockoutPolicyPlugin.Type) -> PluginCatalog {
        self.with(self.messagingKinds.adding(policy: policy))
    }

    /// This catalog with one more msg/1 captcha generator (its name must be new).
    public func adding(captcha: any CaptchaPlugin.Type) -> PluginCatalog {
        self.with(self.messagingKinds.adding(captcha: captcha))
    }

    /// This catalog with one more msg/1 clock (its name must be new).
    public func adding(clock: any ClockPlugin.Type) -> PluginCatalog {
        self.with(self.messagingKinds.adding(clock: clock))
    }

    /// This catalog with msg/1's kinds `kinds`.
    public func with(_ kinds: MessagingKinds) -> PluginCatalog {
        self.with(MessagingKinds.self, kinds)
    }
}
