import Foundation
import LabCore
import LabMessaging
import LabTestSupport
import Testing

/// Captchas asked for and never answered cannot grow the server: beyond its capacity the
/// oldest unanswered one goes, and only that one.
@Suite(.tier(.load)) struct CaptchaCapacityTests {
    @Test("beyond its capacity the service drops the oldest unanswered captchas, and only those")
    func oldestCaptchasGoFirst() async throws {
        let harness = try await Harness(captchaCapacity: 5)
        var (user, client) = try await harness.registered("reader")
        var quiet = NoStepRecorder()
        var issued: [IssuedCaptcha] = []
        for _ in 0..<8 { issued.append(try await client.captcha(recorder: &quiet)) }
        // Eight issued, five kept (3...7): the first is gone. Its refusal comes with a new
        // captcha, which pushes out the next oldest, 3; 4 is then the oldest kept.
        let refused = try await user.login(client, captcha: issued[0], recorder: &quiet)
        #expect(refused.failureCode == .badCaptcha, "captcha 0 was dropped")
        let accepted = try await user.login(client, captcha: issued[4], recorder: &quiet)
        #expect((try? accepted.get()) != nil, "captcha 4 is still kept: \(accepted)")
        let last = try await user.login(client, captcha: issued[7], recorder: &quiet)
        #expect((try? last.get()) != nil, "the newest captcha answers")
    }
}
