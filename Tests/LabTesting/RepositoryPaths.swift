import Foundation

/// Where things are in the repository, found from this file's own path.
public enum RepositoryPaths {
    /// The repository's root folder.
    public static let root: URL = {
        // Tests/LabTesting/RepositoryPaths.swift → the root is three levels up.
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }()

    /// `Tests/Vectors/wycheproof`.
    public static let wycheproof = root.appendingPathComponent("Tests/Vectors/wycheproof")

    /// `Tests/Interop`.
    public static let interop = root.appendingPathComponent("Tests/Interop")
}

extension RepositoryPaths {
    /// The names of the files in `folder` (relative to the root) ending in `.ext`, sorted.
    public static func files(in folder: String, withExtension ext: String) -> [String] {
        let url = root.appendingPathComponent(folder)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
        return names.filter { $0.hasSuffix(".\(ext)") }.sorted()
    }
}
