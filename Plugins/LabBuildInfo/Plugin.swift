import Foundation
import PackagePlugin

/// Writes what a build is made of into the target it is applied to: `BuildPackages`, the
/// version of every package in the resolved graph (so that a provider names the swift-crypto
/// it was built with, not a hand-written "4"), and, for `LabBuild` only, `BuildCheckout`: the
/// lab's git commit, whether tracked files had changes not committed, and the toolchain.
///
/// The checkout's facts come from a prebuild command, run on every build: a commit or an edit
/// changes no input file the build system knows of. Each file is replaced only when its text
/// changes, so an unchanged tree recompiles nothing.
@main
struct LabBuildInfo: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let folder = context.pluginWorkDirectoryURL.appendingPathComponent("generated")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Self.write(Self.packagesFile(context.package), to: folder.appendingPathComponent("BuildPackages.swift"))
        guard target.name == "LabBuild" else {
            // A prebuild command is what makes the folder's files part of the target.
            return [
                .prebuildCommand(
                    displayName: "Package versions for \(target.name)",
                    executable: URL(fileURLWithPath: "/bin/true"),
                    arguments: [],
                    outputFilesDirectory: folder
                )
            ]
        }
        return [
            .prebuildCommand(
                displayName: "Git commit and toolchain for \(target.name)",
                executable: URL(fileURLWithPath: "/bin/sh"),
                arguments: [
                    "-c", Self.checkoutScript, "sh", folder.appendingPathComponent("BuildCheckout.swift").path,
                    context.package.directoryURL.path, (try? context.tool(named: "swiftc").url.path) ?? "swiftc",
                ],
                outputFilesDirectory: folder
            )
        ]
    }

    /// Writes `$1` (a Swift file) from the git checkout at `$2` and `$3 --version` (the
    /// toolchain's `swiftc`).
    static let checkoutScript = #"""
        set -eu
        file=$1 repository=$2 swiftc=$3
        quoted() { if [ -n "$1" ]; then printf '"%s"' "$(printf '%s' "$1" | sed 's/[\\"]/\\&/g')"; else printf nil; fi; }
        commit=$(git -C "$repository" rev-parse HEAD 2>/dev/null || true)
        dirty=nil
        if [ -n "$commit" ]; then
          dirty=false
          [ -z "$(git -C "$repository" status --porcelain --untracked-files=no 2>/dev/null)" ] || dirty=true
        fi
        toolchain=$("$swiftc" --version 2>/dev/null | head -n 1 || true)
        {
          printf '%s\n' '// Generated at build time by Plugins/LabBuildInfo: not in git.' 'enum BuildCheckout {'
          printf '%s\n' '    /// The git commit built, nil outside a git checkout.'
          printf '    static let commit: String? = %s\n' "$(quoted "$commit")"
          printf '%s\n' '    /// Whether tracked files had changes not committed; nil outside a git checkout.'
          printf '    static let dirty: Bool? = %s\n' "$dirty"
          printf '%s\n' '    /// The first line of `swiftc --version` where it was built.'
          printf '    static let toolchain: String? = %s\n' "$(quoted "$toolchain")"
          printf '%s\n' '}'
        } >"$file.tmp"
        if cmp -s "$file.tmp" "$file"; then rm -f "$file.tmp"; else mv "$file.tmp" "$file"; fi
        """#

    /// `BuildPackages`: each package of `package`'s resolved graph, with its version.
    static func packagesFile(_ package: Package) -> String {
        var found: [String: String] = [:]
        var queue = package.dependencies.map(\.package)
        while let next = queue.popLast() {
            guard found[next.displayName] == nil else { continue }
            switch next.origin {
            case .repository(_, let version, _), .registry(_, let version): found[next.displayName] = version
            default: found[next.displayName] = "local"
            }
            queue += next.dependencies.map(\.package)
        }
        let entries = found.sorted { $0.key < $1.key }.map { "        \"\($0.key)\": \"\($0.value)\",\n" }
        return """
            // Generated at build time by Plugins/LabBuildInfo: not in git.
            enum BuildPackages {
                /// Each package of the resolved graph, by name: its version (or revision).
                static let versions: [String: String] = [
            \(entries.isEmpty ? "        :\n" : entries.joined())    ]
            }

            """
    }

    /// Writes `text` to `file` unless it already holds it.
    static func write(_ text: String, to file: URL) throws {
        if let old = try? String(contentsOf: file, encoding: .utf8), old == text { return }
        try text.write(to: file, atomically: true, encoding: .utf8)
    }
}
