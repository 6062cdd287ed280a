import Foundation
import LabCore
import LabMessaging
import LabTestSupport
import Testing

/// Issue 51, break 7: the throttle's book of name-and-source pairs, filled with held-back
/// pairs. Before, past `capacity` the book dropped a tenth, held-back pairs too once none was
/// free: an attacker postponed for 30 minutes who failed on 110,000 more pairs was checked
/// again at once.
@Suite(.tier(.unit)) struct LoginBookTests {
    static let policy = LockoutPolicy.default
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    /// Fails `name` from `source` until the throttle holds it back; returns its postponement.
    @discardableResult
    static func holdBack(_ book: LoginBook, _ name: String, from source: String, at now: Date) -> Date? {
        let subject = Self.policy.subject(username: name, source: source)
        for _ in 0..<10 where Self.policy.gate(book.state(subject, now: now), now: now) == .open {
            book.update(subject, now: now) { state in state = Self.policy.failed(state, now: now) }
        }
        return book.state(subject, now: now).postponedUntil
    }

    @Test("a book full of held-back pairs never frees the attacker who filled it; the owner elsewhere is free")
    func fillingTheBookFreesNobody() throws {
        let book = LoginBook(capacity: 100)
        let now = Self.start
        let until = try #require(Self.holdBack(book, "alice", from: "10.0.0.5", at: now))
        #expect(until > now)
        // 110 more names held back from the attacker's own address: the book overflows with
        // held-back pairs alone.
        // A millisecond apart: the attacker's own pair is the least recently changed.
        for index in 0..<110 { Self.holdBack(book, "name\(index)", from: "10.0.0.5", at: now + Double(index + 1) / 1_000) }
        #expect(book.count <= 100)
        let attacker = book.state(Self.policy.subject(username: "alice", source: "10.0.0.5"), now: now)
        #expect(Self.policy.gate(attacker, now: now) != .open, "the attacker's pair was forgotten: \(attacker)")
        // The network held as a whole is the attacker's address, not a wider one.
        #expect(Set(book.heldNetworks.keys) == ["10.0.0.5"], "\(book.heldNetworks)")
        // The owner, from another address, is not held back.
        let owner = book.state(Self.policy.subject(username: "alice", source: "10.0.0.6"), now: now)
        #expect(Self.policy.gate(owner, now: now) == .open)
        // Once the postponements end, so does the hold.
        let later = until.addingTimeInterval(1)
        #expect(Self.policy.gate(book.state(Self.policy.subject(username: "zed", source: "10.0.0.5"), now: later), now: later) == .open)
    }

    @Test("held-back pairs spread over a /24's addresses hold that /24, not the owner's /16 neighbour")
    func manyAddressesHoldTheirNetwork() throws {
        let book = LoginBook(capacity: 100)
        let now = Self.start
        Self.holdBack(book, "alice", from: "10.0.7.1", at: now)
        for index in 0..<150 {
            Self.holdBack(book, "name\(index)", from: "10.0.7.\(2 + index % 200)", at: now + Double(index + 1) / 1_000)
        }
        #expect(book.count <= 100)
        let attacker = book.state(Self.policy.subject(username: "alice", source: "10.0.7.1"), now: now)
        #expect(Self.policy.gate(attacker, now: now) != .open, "the attacker's pair was forgotten")
        #expect(book.heldNetworks.keys.allSatisfy { $0 == "10.0.7.0/24" }, "\(book.heldNetworks)")
        let owner = book.state(Self.policy.subject(username: "alice", source: "10.0.8.1"), now: now)
        #expect(Self.policy.gate(owner, now: now) == .open)
    }
}
