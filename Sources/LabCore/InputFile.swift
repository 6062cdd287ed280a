public import Foundation

/// Reads a file the user named (a scenario, a results.json), saying why it cannot be read:
/// it does not exist, it is a folder, it may not be read, or what the system answered.
public enum InputFile {
    /// The file's bytes, or a `LabError` (`unreadableFile`): `<path>: cannot read the file: <why>`.
    public static func read(_ path: String) throws -> Data {
        if let reason = Self.problem(path) {
            throw LabError(.unreadableFile, "\(path): cannot read the file: \(reason)")
        }
        do {
            return try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw LabError(.unreadableFile, "\(path): cannot read the file: \(FileReason.describe(error))")
        }
    }

    /// Why a file cannot be read, in a few words: `it does not exist`.
    public struct Unreadable: Error, Sendable {
        /// The reason.
        public var reason: String
    }

    /// The file's bytes, or why it cannot be read.
    public static func contents(_ path: String) -> Result<Data, Unreadable> {
        if let reason = Self.problem(path) { return .failure(Unreadable(reason: reason)) }
        do {
            return .success(try Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            return .failure(Unreadable(reason: FileReason.describe(error)))
        }
    }

    /// Why `path` cannot be read, found before reading it; nil when nothing is known against it.
    static func problem(_ path: String) -> String? {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            return "it does not exist"
        }
        if isDirectory.boolValue { return "it is a folder" }
        if !FileManager.default.isReadableFile(atPath: path) { return "permission denied" }
        return nil
    }
}
