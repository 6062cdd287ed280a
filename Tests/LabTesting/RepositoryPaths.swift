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
