import Foundation
import LabCore
import LabTestSupport
import Testing

/// File errors in a few plain words, never Foundation's domain, code and user-info dump.
@Suite(.tier(.unit)) struct FileReasonTests {
    @Test("errno and Foundation's file errors read as the reason: permission denied, read-only file system")
    func reasons() {
        #expect(FileReason.describe(errno: EACCES) == "permission denied")
        #expect(FileReason.describe(errno: EROFS) == "read-only file system")
        #expect(FileReason.describe(errno: ENOTDIR) == "a part of the path is not a folder")
        // As Foundation throws them: with the POSIX error underneath, or a Cocoa code alone.
        let underlying = NSError(
            domain: NSCocoaErrorDomain,
            code: CocoaError.fileWriteUnknown.rawValue,
            userInfo: [NSUnderlyingErrorKey: NSError(domain: NSPOSIXErrorDomain, code: Int(EROFS))]
        )
        #expect(FileReason.describe(underlying) == "read-only file system")
        #expect(FileReason.describe(CocoaError(.fileWriteNoPermission)) == "permission denied")
        #expect(FileReason.describe(CocoaError(.fileNoSuchFile)) == "it does not exist")
        // A real one: a file where a folder should be.
        do {
            try Data().write(to: URL(fileURLWithPath: "/dev/null/x"))
            Issue.record("/dev/null/x was written")
        } catch {
            #expect(FileReason.describe(error) == "a part of the path is not a folder")
        }
    }
}
