import LabBuild
import LabResults

extension LabInfo {
    /// This build of the lab (`LabBuild`).
    static let current = LabInfo(
        version: LabBuild.version,
        commit: LabBuild.commit,
        dirty: LabBuild.dirty,
        toolchain: LabBuild.toolchain
    )

    /// `lab --version`: the version and commit, then the toolchain and swift-crypto.
    var versionText: String {
        var lines = ["lab " + LabBuild.description]
        if let toolchain = self.toolchain { lines.append("built with " + toolchain) }
        if let crypto = LabBuild.package("swift-crypto") { lines.append("swift-crypto " + crypto) }
        return lines.joined(separator: "\n")
    }
}
