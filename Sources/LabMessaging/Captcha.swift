public import Foundation
import LabCore
import Synchronization

/// A captcha-generator plugin (`MessagingKinds.captchas`): how captcha texts are made.
public protocol CaptchaPlugin: Sendable {
    /// Its name, summary and marks.
    static var choice: NamedChoice { get }
    /// A generator.
    init()
    /// A captcha text, made at `now`.
    func make(now: Date) -> String
}

/// How captcha texts are made: a generator plugin; the built-in ones are `csprng` (the
/// default) and `midsquare` (the reference's). Two are equal when they have one name.
public struct CaptchaGenerator: Sendable, Hashable {
    /// The generator.
    public let plugin: any CaptchaPlugin

    /// `plugin`, as the service uses it.
    public init(_ plugin: any CaptchaPlugin) {
        self.plugin = plugin
    }

    /// Five characters drawn from the system's CSPRNG.
    public static let csprng = CaptchaGenerator(CSPRNGCaptcha())
    /// The reference's middle-square method (`MiddleSquareCaptcha`).
    public static let midsquare = CaptchaGenerator(MiddleSquareCaptcha())

    /// Captcha characters: A–Z then 0–9.
    public static let alphabet: [Character] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
    /// Captcha length.
    public static let length = 5

    /// The plugin's name.
    public var name: String { type(of: self.plugin).choice.name }

    /// Whether reports must mark it insecure.
    public var isInsecure: Bool { type(of: self.plugin).choice.isInsecure }

    /// A captcha text, made at `now`.
    public func make(now: Date) -> String { self.plugin.make(now: now) }

    /// `MiddleSquareCaptcha.make(now:)`.
    public static func midsquare(now: Date) -> String { MiddleSquareCaptcha().make(now: now) }

    public static func == (lhs: CaptchaGenerator, rhs: CaptchaGenerator) -> Bool { lhs.name == rhs.name }

    public func hash(into hasher: inout Hasher) { hasher.combine(self.name) }
}

/// `csprng`: five characters drawn from the system's CSPRNG.
public struct CSPRNGCaptcha: CaptchaPlugin {
    public static let choice = NamedChoice("csprng", "5 characters from the system's CSPRNG", isDefault: true)

    public init() {}

    public func make(now: Date) -> String {
        var generator = SystemRandomNumberGenerator()
        let alphabet = CaptchaGenerator.alphabet
        return String((0..<CaptchaGenerator.length).map { _ in alphabet.randomElement(using: &generator)! })
    }
}

/// `midsquare`, the reference's: von Neumann's middle-square method seeded with the time's
/// "ssmm" (seconds and minutes), so anyone who knows the server's clock knows its captcha.
public struct MiddleSquareCaptcha: CaptchaPlugin {
    public static let choice = NamedChoice(
        "midsquare",
        "middle-square seeded with the clock's seconds and minutes: the reference app's, predictable",
        isInsecure: true
    )

    public init() {}

    /// The middle-square captcha for `now` (UTC): seed = the 4-digit number "ssmm"; for
    /// each character, seed = the middle 4 digits of seed² (as an 8-digit number) and the
    /// character is `alphabet[seed % 36]`. (The `captcha-guess` attacker has a predictor of
    /// its own, `MiddleSquarePredictor`; both are checked against independent vectors.)
    public func make(now: Date) -> String {
        let alphabet = CaptchaGenerator.alphabet
        let seconds = Int(now.timeIntervalSince1970.rounded(.down))
        let second = ((seconds % 60) + 60) % 60
        let minute = (((seconds / 60) % 60) + 60) % 60
        var seed = second * 100 + minute
        var text = ""
        for _ in 0..<CaptchaGenerator.length {
            seed = (seed * seed / 100) % 10_000
            text.append(alphabet[seed % alphabet.count])
        }
        return text
    }
}

/// Captchas issued and not yet answered: each answers one attempt, right or wrong, and
/// expires after `lifetime`.
///
/// At most `capacity` are kept: beyond it the oldest goes, so a client asking for captchas
/// and never answering cannot grow the server's memory. Ids are also kept in the order they
/// were issued, which is the order they expire in (one lifetime for all): making room and
/// dropping expired ones takes the front of that queue, constant time per captcha. (A scan
/// of the whole book per issue, as this once did when full, cost a 100,000-entry copy for
/// every captcha an attacker asked for; the msg/1 fuzzer found it.)
final class CaptchaBook: Sendable {
    struct Pending {
        var text: String
        var expires: Date
    }

    private struct State {
        var pending: [String: Pending] = [:]
        /// Ids in the order issued; `head` is the oldest still queued.
        var order: [String] = []
        var head = 0

        /// Removes the oldest queued id (already redeemed ones are skipped by the caller).
        mutating func popOldest() -> String? {
            guard self.head < self.order.count else { return nil }
            let id = self.order[self.head]
            self.head += 1
            if self.head > 1_024, self.head * 2 > self.order.count {
                self.order.removeFirst(self.head)
                self.head = 0
            }
            return id
        }
    }

    private let state = Mutex(State())
    private let generator: CaptchaGenerator
    private let clock: any LabClock
    private let lifetime: TimeInterval
    /// The most unanswered captchas kept: the oldest go first beyond it.
    let capacity: Int

    init(generator: CaptchaGenerator, clock: any LabClock, lifetime: TimeInterval = 300, capacity: Int = 100_000) {
        self.generator = generator
        self.clock = clock
        self.lifetime = lifetime
        self.capacity = capacity
    }

    /// Captchas issued and not yet answered or dropped.
    var count: Int { self.state.withLock { $0.pending.count } }

    /// Issues a captcha: its id and text.
    func issue() -> (id: String, text: String) {
        let now = self.clock.now()
        let text = self.generator.make(now: now)
        let id = Token.random(bytes: 16)
        self.state.withLock { state in
            // Drop the expired ones at the front, then the oldest while full.
            while state.head < state.order.count {
                let oldest = state.order[state.head]
                guard let entry = state.pending[oldest] else {
                    _ = state.popOldest()  // redeemed already
                    continue
                }
                guard entry.expires <= now || state.pending.count >= self.capacity else { break }
                _ = state.popOldest()
                state.pending.removeValue(forKey: oldest)
            }
            state.pending[id] = Pending(text: text, expires: now.addingTimeInterval(self.lifetime))
            state.order.append(id)
            // Answered ids stay queued until they reach the front; behind an unanswered one
            // they would pile up. Past twice the pending count, keep only the pending ones.
            if state.order.count - state.head > 2 * state.pending.count + 1_024 {
                state.order = state.order[state.head...].filter { state.pending[$0] != nil }
                state.head = 0
            }
        }
        return (id, text)
    }

    /// Whether `answer` matches captcha `id` (case-insensitive); the captcha is used up either way.
    func redeem(id: String, answer: String) -> Bool {
        self.take(id: id, answer: answer) != nil
    }

    /// A captcha answered right, which `restore` puts back.
    struct Taken: Sendable {
        let id: String
        let entry: Pending
    }

    /// Redeems like `redeem`, returning the captcha answered right so that a request refused
    /// `busy` afterwards can give it back (`restore`); nil when the answer is wrong.
    func take(id: String, answer: String) -> Taken? {
        let now = self.clock.now()
        guard let entry = self.state.withLock({ $0.pending.removeValue(forKey: id) }),
            entry.expires > now, entry.text == answer.uppercased()
        else { return nil }
        return Taken(id: id, entry: entry)
    }

    /// Puts back a captcha taken by a request that then changed nothing (`busy`): it can be
    /// answered again until it expires, as if never used.
    func restore(_ taken: Taken) {
        self.state.withLock { state in
            guard state.pending[taken.id] == nil else { return }
            state.pending[taken.id] = taken.entry
            state.order.append(taken.id)
        }
    }
}

/// Random identifiers: hex of CSPRNG bytes.
enum Token {
    static func random(bytes count: Int) -> String {
        SecureRandom.bytes(count).hexString
    }
}
