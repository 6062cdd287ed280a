public import Foundation
import Synchronization

/// The time source of policies that wait in wall-clock time (the messaging service's
/// postponements, captcha expiry): `system` or `virtual`.
///
/// Policies never read `Date()` themselves, so a 30-minute postponement can be walked in a
/// test, or a scenario, without waiting 30 minutes.
public protocol LabClock: Sendable {
    /// The name scenario files use, e.g. `virtual`.
    var name: String { get }
    /// The current time.
    func now() -> Date
    /// Returns at `instant` or later: the system clock sleeps; the virtual clock jumps there.
    func sleep(until instant: Date) async throws
}

/// Real time: `Date()`, and real sleeps.
public struct SystemClock: LabClock {
    /// A system clock.
    public init() {}

    /// `system`.
    public var name: String { "system" }

    /// `Date()`.
    public func now() -> Date { Date() }

    /// Sleeps until `instant`.
    public func sleep(until instant: Date) async throws {
        let seconds = instant.timeIntervalSinceNow
        if seconds > 0 { try await Task.sleep(nanoseconds: UInt64(seconds * 1e9)) }
    }
}

/// Time that moves only when someone waits: `sleep(until:)` sets the clock to that instant
/// at once, so a postponement passes instantly and every run sees the same times.
///
/// It starts at a fixed instant (by default 2009-06-01 12:00:00 UTC, the year of the
/// CryptoExercise sample) and never goes backwards.
public final class VirtualClock: LabClock {
    private let current: Mutex<Date>

    /// The default start: 2009-06-01T12:00:00Z.
    public static let defaultStart = Date(timeIntervalSince1970: 1_243_857_600)

    /// A virtual clock reading `start`.
    public init(start: Date) {
        self.current = Mutex(start)
    }

    /// `virtual`.
    public var name: String { "virtual" }

    /// The clock's current reading.
    public func now() -> Date { self.current.withLock { $0 } }

    /// Moves the clock to `instant` if that is later; returns at once.
    public func sleep(until instant: Date) async throws {
        try Task.checkCancellation()
        self.advance(to: instant)
    }

    /// Moves the clock forward by `seconds`.
    public func advance(by seconds: TimeInterval) {
        self.current.withLock { $0 = $0.addingTimeInterval(max(0, seconds)) }
    }

    /// Moves the clock to `instant` if that is later.
    public func advance(to instant: Date) {
        self.current.withLock { $0 = max($0, instant) }
    }
}

/// A clock plugin (`MessagingKinds.clocks`): a `LabClock` that scenario options and `lab
/// serve` can name.
public protocol ClockPlugin: LabClock {
    /// Its name and summary.
    static var choice: NamedChoice { get }
    /// Whether its waits take real time (a flow that waits out a postponement on it takes
    /// that long).
    static var waitsInRealTime: Bool { get }
    /// A fresh clock.
    init()
}

extension SystemClock: ClockPlugin {
    public static let choice = NamedChoice("system", "real time (lab serve's default)")
    public static var waitsInRealTime: Bool { true }
}

extension VirtualClock: ClockPlugin {
    public static let choice = NamedChoice(
        "virtual",
        "time that jumps to each wait's end, so a 30-minute postponement passes at once (scenarios' default)"
    )
    public static var waitsInRealTime: Bool { false }

    public convenience init() { self.init(start: VirtualClock.defaultStart) }
}

/// A clock plugin, by type: what a scenario's service or `lab serve` makes its clock of.
/// Two are equal when they have one name.
public struct ClockKind: Sendable, Hashable {
    /// The plugin.
    public let plugin: any ClockPlugin.Type

    /// `plugin`.
    public init(_ plugin: any ClockPlugin.Type) {
        self.plugin = plugin
    }

    /// Real time.
    public static let system = ClockKind(SystemClock.self)
    /// Virtual time (see `VirtualClock`).
    public static let virtual = ClockKind(VirtualClock.self)

    /// The plugin's name.
    public var name: String { self.plugin.choice.name }

    /// A fresh clock of this kind.
    public func make() -> any LabClock { self.plugin.init() }

    public static func == (lhs: ClockKind, rhs: ClockKind) -> Bool { lhs.name == rhs.name }

    public func hash(into hasher: inout Hasher) { hasher.combine(self.name) }
}
