import ArgumentParser
import Foundation
import GRDB
import LabBuiltIns
import LabCore
import LabMessaging
import LabTransports
import Synchronization

/// Test support for `RekeyCrashTests`: the msg/1 service that `lab serve` runs, over TCP on
/// loopback, with one thing `lab` does not have: a rekey's write transaction stalls once it
/// has rewritten `--stall-after` messages, and a line on stdout says so, so that the test
/// can kill this process (SIGKILL) while the transaction is open.
///
/// The stall is a GRDB transaction observer added from here: the production service carries
/// no test hook, and the restart the test then checks is a real `lab serve`.
@main struct StallingServer: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A msg/1 server whose rekeys stall halfway, for a test to kill."
    )

    @Option(help: "The message store (SQLite), created if missing.")
    var db: String

    @Option(help: "Messages a rekey rewrites before it stalls.")
    var stallAfter: Int

    @Option(help: "How long the stall lasts and, at most, the server (seconds).")
    var seconds: Int = 120

    func validate() throws {
        guard self.stallAfter >= 1 else { throw ValidationError("--stall-after must be at least 1") }
        guard self.seconds >= 1 else { throw ValidationError("--seconds must be at least 1") }
    }

    func run() async throws {
        let store = try MessagingStore(path: self.db)
        let stall = RekeyStall(after: self.stallAfter, seconds: self.seconds)
        store.add(transactionObserver: stall)
        // Passwords cheap to check: the test registers and logs in four times.
        let service = MessagingService(
            store: store,
            options: MessagingOptions(kdf: .pbkdf2SHA256(iterations: 1000)),
            kinds: BuiltInPlugins.messagingKinds
        )
        let server = try await TCPTransport(options: TransportOptions(host: "127.0.0.1", port: 0))
            .listen(service, recorder: nil)
        RekeyStall.say("listening on \(server.host):\(server.port)")
        // Bounded: a test that forgets to kill this server does not leave it running.
        try? await Task.sleep(for: .seconds(self.seconds))
        await server.shutdown(grace: .zero)
        withExtendedLifetime(stall) {}
    }
}

/// Counts the rows updated in `messages` (only a rekey updates them) and stalls the
/// transaction that updates the `after`-th, once per process. The count runs across
/// transactions, so that a rekey split into several would be caught with some committed.
final class RekeyStall: TransactionObserver, Sendable {
    let after: Int
    let seconds: Int
    private let state = Mutex((rewritten: 0, stalled: false))

    init(after: Int, seconds: Int) {
        self.after = after
        self.seconds = seconds
    }

    /// Writes `line` to stdout at once: the test waits for it on a pipe.
    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool {
        if case .update(let table, _) = eventKind { return table == "messages" }
        return false
    }

    func databaseDidChange(with event: DatabaseEvent) {
        let stall = self.state.withLock { state -> Bool in
            state.rewritten += 1
            guard !state.stalled, state.rewritten == self.after else { return false }
            state.stalled = true
            return true
        }
        guard stall else { return }
        Self.say("rekey: stalled after \(self.after) rewritten messages")
        // On GRDB's writer, inside the open transaction: the point of the exercise.
        Thread.sleep(forTimeInterval: TimeInterval(self.seconds))
    }

    func databaseDidCommit(_ db: Database) {}

    func databaseDidRollback(_ db: Database) {}
}
