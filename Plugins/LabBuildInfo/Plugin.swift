import Foundation
import PackagePlugin

/// Writes what a build is made of into the target it is applied to: `BuildPackages`, the
/// version of every package in the resolved graph (so that a provider names the swift-crypto
/// it was built with, not a hand-written "4"), and, for `LabBuild` only, `BuildCheckout`: the
/// lab's git commit, whether tracked files had changes not committed, and the toolchain.
///
/// The checkout's facts come from a build command whose inputs are what moves them: git's
/// `HEAD` and index, the current branch's ref, and every source file of the package. A
/// prebuild command ran only when SwiftPM re-planned the build, not on every build: a tree
/// edited, built, restored and built again kept "with changes not committed". Each file is
/// replaced only when its text changes, so an unchanged tree recompiles nothing. An edit to a
/// file outside the targets (a doc) moves the flag at the next build that git or a source
/// file triggers.
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
        let checkout = context.pluginWorkDirectoryURL.appendingPathComponent("BuildCheckout.swift")
        // Where the prebuild command used to write it: a copy left there would be compiled twice.
        try? FileManager.default.removeItem(at: folder.appendingPathComponent("BuildCheckout.swift"))
        return [
            .buildCommand(
                displayName: "Git commit and toolchain for \(target.name)",
                executable: URL(fileURLWithPath: "/bin/sh"),
                arguments: [
                    "-c", Self.checkoutScript, "sh", checkout.path,
                    context.package.directoryURL.path, (try? context.tool(named: "swiftc").url.path) ?? "swiftc",
                ],
                inputFiles: Self.gitFiles(context.package.directoryURL) + Self.sourceFiles(context.package),
                outputFiles: [checkout]
            ),
            .prebuildCommand(
                displayName: "Package versions for \(target.name)",
                executable: URL(fileURLWithPath: "/bin/true"),
                arguments: [],
                outputFilesDirectory: folder
            ),
        ]
    }

    /// Git's files that move when a commit is made or the tree's state is looked at: `HEAD`,
    /// the index, and the current branch's ref (a worktree's `.git` is a file naming its folder).
    static func gitFiles(_ repository: URL) -> [URL] {
        var gitDirectory = repository.appendingPathComponent(".git")
        if let link = try? String(contentsOf: gitDirectory, encoding: .utf8), link.hasPrefix("gitdir: ") {
            let path = link.dropFirst("gitdir: ".count).trimmingCharacters(in: .whitespacesAndNewlines)
            gitDirectory = URL(fileURLWithPath: path, relativeTo: repository).standardizedFileURL
        }
        var files = [gitDirectory.appendingPathComponent("HEAD"), gitDirectory.appendingPathComponent("index")]
        let common =
            (try? String(contentsOf: gitDirectory.appendingPathComponent("commondir"), encoding: .utf8))
            .map { URL(fileURLWithPath: $0.trimmingCharacters(in: .whitespacesAndNewlines), relativeTo: gitDirectory) }
            ?? gitDirectory
        if let head = try? String(contentsOf: files[0], encoding: .utf8), head.hasPrefix("ref: ") {
            let ref = head.dropFirst("ref: ".count).trimmingCharacters(in: .whitespacesAndNewlines)
            files.append(common.appendingPathComponent(ref).standardizedFileURL)
        }
        return files.filter { FileManager.default.fileExists(atPath: $0.path) }
    }

    /// Every source file of the package's targets.
    static func sourceFiles(_ package: Package) -> [URL] {
        package.targets.flatMap { target in
            (target as? SourceModuleTarget)?.sourceFiles.map(\.url) ?? []
        }
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

    /// `BuildPackages`: each package whose modules `package`'s products are built from, with
    /// its version. A package only the tests use (SwiftCSV) is left out: it is in no `lab`,
    /// and a package that depends on the lab does not resolve it, so the file, and the
    /// modules compiled with it, would differ between the lab's own build and theirs.
    static func packagesFile(_ package: Package) -> String {
        let built = Self.targetsBuilt(for: package.products)
        var found: [String: String] = [:]
        var queue = package.dependencies.map(\.package)
        while let next = queue.popLast() {
            guard found[next.displayName] == nil else { continue }
            queue += next.dependencies.map(\.package)
            guard next.targets.contains(where: { built.contains($0.id) }) else { continue }
            switch next.origin {
            case .repository(_, let version, _), .registry(_, let version): found[next.displayName] = version
            default: found[next.displayName] = "local"
            }
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

    /// The ids of every target `products` contain, and of every target those depend on,
    /// across packages.
    static func targetsBuilt(for products: [Product]) -> Set<Target.ID> {
        var seen: Set<Target.ID> = []
        var stack = products.flatMap(\.targets)
        while let target = stack.popLast() {
            guard seen.insert(target.id).inserted else { continue }
            for dependency in target.dependencies {
                switch dependency {
                case .target(let other): stack.append(other)
                case .product(let product): stack += product.targets
                @unknown default: break
                }
            }
        }
        return seen
    }

    /// Writes `text` to `file` unless it already holds it.
    static func write(_ text: String, to file: URL) throws {
        if let old = try? String(contentsOf: file, encoding: .utf8), old == text { return }
        try text.write(to: file, atomically: true, encoding: .utf8)
    }
}
