public import Foundation

/// Where things are in the repository, found from this file's own path.
public enum RepositoryPaths {
    /// The repository's root folder.
    public static let root: URL = {
        // Sources/LabTestKit/RepositoryPaths.swift → the root is three levels up.
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }()

    /// `Tests/Vectors/wycheproof`.
    public static let wycheproof = root.appendingPathComponent("Tests/Vectors/wycheproof")

    /// `Tests/Interop`.
    public static let interop = root.appendingPathComponent("Tests/Interop")

    /// The release build of `lab` (`swift build -c release --product lab`, which scripts/test
    /// makes before its passes): the build the counted gate counts.
    public static let releaseLab = root.appendingPathComponent(".build/release/lab")
}

extension RepositoryPaths {
    /// The names of the files in `folder` (relative to the root) ending in `.ext`, sorted.
    public static func files(in folder: String, withExtension ext: String) -> [String] {
        let url = root.appendingPathComponent(folder)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
        return names.filter { $0.hasSuffix(".\(ext)") }.sorted()
    }

    /// The paths, relative to `folder` (itself relative to the root), of the files ending in
    /// `.ext` anywhere below it, at any depth, sorted: e.g. `perf/inprocess-1000.json`.
    public static func filesBelow(_ folder: String, withExtension ext: String) -> [String] {
        let url = root.appendingPathComponent(folder).standardizedFileURL
        guard let walker = FileManager.default.enumerator(at: url, includingPropertiesForKeys: [.isRegularFileKey])
        else { return [] }
        var found: [String] = []
        for case let file as URL in walker where file.pathExtension == ext {
            let path = file.standardizedFileURL.path
            guard path.hasPrefix(url.path + "/") else { continue }
            found.append(String(path.dropFirst(url.path.count + 1)))
        }
        return found.sorted()
    }
}
