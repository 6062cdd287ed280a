import Foundation
import LabCore
import Synchronization

/// How captcha texts are made: `csprng` (the default) or `midsquare` (the reference's).
public enum CaptchaGenerator: String, Sendable, Hashable, CaseIterable, Decodable {
    /// Five characters drawn from the system's CSPRNG.
    case csprng
    /// The reference's: von Neumann's middle-square method seeded with the time's "ssmm"
    /// (seconds and minutes), so anyone who knows the server's clock knows its captcha.
    case midsquare

    /// Captcha characters: A–Z then 0–9.
    public static let alphabet: [Character] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
    /// Captcha length.
    public static let length = 5

    /// Whether reports must mark it insecure.
    public var isInsecure: Bool { self == .midsquare }

    /// A captcha text, made at `now`.
    public func make(now: Date) -> String {
        switch self {
        case .csprng:
            var generator = SystemRandomNumberGenerator()
            return String((0..<Self.length).map { _ in Self.alphabet.randomElement(using: &generator)! })
        case .midsquare:
            return Self.midsquare(now: now)
        }
    }

    /// The middle-square captcha for `now` (UTC): seed = the 4-digit number "ssmm"; for
    /// each character, seed = the middle 4 digits of seed² (as an 8-digit number) and the
    /// character is `alphabet[seed % 36]`. Public: the attacker flow predicts with it.
    public static func midsquare(now: Date) -> String {
        let seconds = Int(now.timeIntervalSince1970.rounded(.down))
        let second = ((seconds % 60) + 60) % 60
        let minute = (((seconds / 60) % 60) + 60) % 60
        var seed = second * 100 + minute
        var text = ""
        for _ in 0..<Self.length {
            seed = (seed * seed / 100) % 10_000
            text.append(Self.alphabet[seed % Self.alphabet.count])
        }
        return text
    }
}

/// Captchas issued and not yet answered: each answers one attempt, right or wrong, and
/// expires after `lifetime`.
final class CaptchaBook: Sendable {
    private struct Pending {
        var text: String
        var expires: Date
    }

    private let pending = Mutex<[String: Pending]>([:])
    private let generator: CaptchaGenerator
    private let clock: any LabClock
    private let lifetime: TimeInterval
    /// The most unanswered captchas kept: the oldest go first beyond it.
    private let capacity = 100_000

    init(generator: CaptchaGenerator, clock: any LabClock, lifetime: TimeInterval = 300) {
        self.generator = generator
        self.clock = clock
        self.lifetime = lifetime
    }

    /// Issues a captcha: its id and text.
    func issue() -> (id: String, text: String) {
        let now = self.clock.now()
        let text = self.generator.make(now: now)
        let id = Token.random(bytes: 16)
        self.pending.withLock { pending in
            if pending.count >= self.capacity {
                // Drop the expired ones; if none, the oldest (an attacker asking for
                // captchas without answering must not grow memory without bound).
                pending = pending.filter { $0.value.expires > now }
                if pending.count >= self.capacity, let oldest = pending.min(by: { $0.value.expires < $1.value.expires })
                {
                    pending.removeValue(forKey: oldest.key)
                }
            }
            pending[id] = Pending(text: text, expires: now.addingTimeInterval(self.lifetime))
        }
        return (id, text)
    }

    /// Whether `answer` matches captcha `id` (case-insensitive); the captcha is used up either way.
    func redeem(id: String, answer: String) -> Bool {
        let now = self.clock.now()
        guard let entry = self.pending.withLock({ $0.removeValue(forKey: id) }) else { return false }
        return entry.expires > now && entry.text == answer.uppercased()
    }
}

/// Random identifiers: hex of CSPRNG bytes.
enum Token {
    static func random(bytes count: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in String(format: "%02x", UInt8.random(in: .min ... .max, using: &generator)) }
            .joined()
    }
}
