/// What this build of the lab is: its version, the git commit it was built from, the
/// toolchain, and the packages it was built with. Written at build time
/// (`Plugins/LabBuildInfo`), so that every results.json and report can say which lab made it.
public enum LabBuild {
    /// The lab's version, raised with each release.
    public static let version = "0.1.0"

    /// The git commit built, nil when built outside a git checkout.
    public static var commit: String? { BuildCheckout.commit }

    /// Whether tracked files had changes not committed when it was built; nil outside a checkout.
    public static var dirty: Bool? { BuildCheckout.dirty }

    /// The first line of the compiler's `--version` where it was built.
    public static var toolchain: String? { BuildCheckout.toolchain }

    /// The version (or revision) of the package `name` it was built with, e.g.
    /// `swift-crypto` → `4.5.2`.
    public static func package(_ name: String) -> String? { BuildPackages.versions[name] }

    /// `0.1.0 (commit 1a2b3c4d5e6f, with changes not committed)`: the version and where it
    /// came from, in one line.
    public static var description: String {
        guard let commit = Self.commit else { return "\(Self.version) (not built from a git checkout)" }
        let changes = Self.dirty == true ? ", with changes not committed" : ""
        return "\(Self.version) (commit \(commit.prefix(12))\(changes))"
    }
}
