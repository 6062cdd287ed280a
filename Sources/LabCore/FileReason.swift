import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Why a file or folder could not be read, made or written, in a few plain words
/// ("permission denied", "read-only file system"): what the lab prints after the path,
/// never Foundation's domain, code and user-info dump.
public enum FileReason {
    /// `code` (an `errno`) in words.
    public static func describe(errno code: Int32) -> String {
        switch code {
        case EACCES: return "permission denied"
        case EPERM: return "operation not permitted"
        case EROFS: return "read-only file system"
        case ENOTDIR: return "a part of the path is not a folder"
        case ENOENT: return "it does not exist"
        case EISDIR: return "it is a folder"
        case EEXIST: return "it already exists"
        case ENOSPC: return "no space left on the device"
        case EDQUOT: return "disk quota exceeded"
        default:
            let text = String(cString: strerror(code))
            return text.prefix(1).lowercased() + text.dropFirst()
        }
    }

    /// A file error thrown by Foundation in words: its `errno` when it carries one, else
    /// what its code means.
    public static func describe(_ error: any Error) -> String {
        let error = error as NSError
        if error.domain == NSPOSIXErrorDomain { return Self.describe(errno: Int32(error.code)) }
        if let underlying = error.userInfo[NSUnderlyingErrorKey] as? any Error,
            (underlying as NSError).domain == NSPOSIXErrorDomain
        {
            return Self.describe(errno: Int32((underlying as NSError).code))
        }
        guard error.domain == NSCocoaErrorDomain else { return error.localizedDescription }
        switch CocoaError.Code(rawValue: error.code) {
        case .fileNoSuchFile, .fileReadNoSuchFile: return Self.describe(errno: ENOENT)
        case .fileReadNoPermission, .fileWriteNoPermission: return Self.describe(errno: EACCES)
        case .fileWriteVolumeReadOnly: return Self.describe(errno: EROFS)
        case .fileWriteOutOfSpace: return Self.describe(errno: ENOSPC)
        case .fileWriteFileExists: return Self.describe(errno: EEXIST)
        // Foundation's own text for the rest names its domain and code: not for people.
        default: return "the system refused it (file error \(error.code))"
        }
    }
}
