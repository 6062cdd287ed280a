import Foundation
import LabCore
import LabTestSupport
import Testing

/// The fuzz targets over the committed corpus and every input a fuzzer once found: a past
/// crash or broken property stays fixed (docs/hardening.md, "Fuzzing").
@Suite(.tier(.unit)) struct FuzzCorpusTests {
    /// `Fuzz/` in this checkout.
    static let fuzzFolder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz")

    static func inputs(_ kind: String, _ target: FuzzTarget) -> [URL] {
        let folder = Self.fuzzFolder.appendingPathComponent(kind).appendingPathComponent(target.rawValue)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { !$0.hasPrefix(".") }.sorted().map { folder.appendingPathComponent($0) }
    }

    @Test(arguments: FuzzTarget.allCases)
    func seedsAndFindingsHoldEveryProperty(_ target: FuzzTarget) async throws {
        for kind in ["Corpus", "Regressions"] {
            let folder = Self.fuzzFolder.appendingPathComponent(kind).appendingPathComponent(target.rawValue)
            #expect(FileManager.default.fileExists(atPath: folder.path), "Fuzz/\(kind)/\(target.rawValue) is missing")
        }
        let seeds = Self.inputs("Corpus", target)
        #expect(seeds.count >= 5, "Fuzz/Corpus/\(target.rawValue) has \(seeds.count) seeds")
        var failures: [String] = []
        for file in seeds + Self.inputs("Regressions", target) {
            let input = try [UInt8](Data(contentsOf: file))
            do {
                try await target.run(input)
            } catch {
                failures.append("\(file.lastPathComponent): \(error)")
            }
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }
}
