import Foundation
import LabMessaging
import LabTestSupport
import Testing

/// The middle-square captcha, pinned to vectors from an independent implementation:
/// `Tests/Interop/midsquare.py`, written from the reference's description alone, made
/// `Tests/Interop/midsquare-vectors.txt` (every "ssmm" of an hour, and a few far-apart
/// times). The server's generator and the `captcha-guess` attacker's own predictor must
/// each give every vector.
@Suite(.tier(.unit)) struct CaptchaVectorTests {
    static let vectorsFile = RepositoryPaths.interop.appendingPathComponent("midsquare-vectors.txt")

    static func vectors() throws -> [(time: Date, captcha: String)] {
        try String(contentsOf: Self.vectorsFile, encoding: .utf8).split(separator: "\n").map { line in
            let parts = line.split(separator: " ")
            let seconds = try #require(parts.count == 2 ? TimeInterval(String(parts[0])) : nil, "line \(line)")
            return (Date(timeIntervalSince1970: seconds), String(parts[1]))
        }
    }

    @Test("The server's middle-square captchas match the independent vectors, all 3,600 seeds")
    func serverGenerator() throws {
        let vectors = try Self.vectors()
        #expect(vectors.count == 3_607)
        let wrong = vectors.filter { CaptchaGenerator.midsquare(now: $0.time) != $0.captcha }
        #expect(wrong.isEmpty, "\(wrong.count) differ, e.g. \(wrong.prefix(3))")
        // Within a second the captcha does not change.
        let first = try #require(vectors.first)
        #expect(CaptchaGenerator.midsquare(now: first.time.addingTimeInterval(0.999)) == first.captcha)
    }

    @Test("The attacker's own predictor matches the same vectors")
    func attackerPredictor() throws {
        let wrong = try Self.vectors().filter { MiddleSquarePredictor.captcha(at: $0.time) != $0.captcha }
        #expect(wrong.isEmpty, "\(wrong.count) differ, e.g. \(wrong.prefix(3))")
    }

    @Test("The committed vectors are what the independent implementation prints")
    func vectorsComeFromPython() async throws {
        let script = RepositoryPaths.interop.appendingPathComponent("midsquare.py").path
        let run = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", script, "vectors"])
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.output == (try String(contentsOf: Self.vectorsFile, encoding: .utf8)))
    }
}
