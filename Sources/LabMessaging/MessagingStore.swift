import Foundation
package import GRDB
import LabCore

/// The messaging service's durable state: one SQLite file in WAL mode through GRDB.
///
/// Every change is one transaction; a login's counter update re-reads the account inside
/// its write transaction, and GRDB runs write transactions one at a time, so concurrent
/// attempts cannot lose an update. The server stores password hashes, public keys,
/// wrapped chat keys and ciphertext: nothing it could read a message with.
public final class MessagingStore: Sendable {
    /// The database file.
    public let path: String
    let pool: DatabasePool

    /// Opens (creating if needed) the store at `path` and brings its schema up to date.
    public init(path: String) throws {
        self.path = path
        do {
            try FileManager.default.createDirectory(
                at: URL(fileURLWithPath: path).deletingLastPathComponent(),
                withIntermediateDirectories: true
            )
            // Password hashes and wrapped chat keys: readable by the owner only. SQLite gives
            // its -wal and -shm files the database file's mode, so a new file starts at 0600.
            if !FileManager.default.fileExists(atPath: path) {
                guard
                    FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600])
                else { throw LabError(.storage, "Cannot create the message store at \(path)") }
            }
            var configuration = Configuration()
            configuration.busyMode = .timeout(30)
            configuration.foreignKeysEnabled = true
            configuration.label = "msg-store"
            self.pool = try DatabasePool(path: path, configuration: configuration)
            try Self.migrator.migrate(self.pool)
            // Staged rekey pages do not outlive the process: a rekey under way when it ended
            // starts again at page 0 (its next page is `conflict`), and a user who never came
            // back leaves nothing behind.
            try self.pool.write { db in try db.execute(sql: "DELETE FROM rekeyPages") }
        } catch let error as LabError {
            throw error
        } catch {
            throw LabError(
                .storage,
                "Cannot open the message store at \(path)",
                cause: UnderlyingError(describing: error)
            )
        }
    }

    /// Tells `observer` of the store's changes as GRDB sees them, row by row inside each
    /// transaction, for as long as `observer` lives. For test support (the stalling server
    /// that `RekeyCrashTests` kills halfway through a rekey); the service adds none.
    package func add(transactionObserver observer: some TransactionObserver) {
        self.pool.add(transactionObserver: observer, extent: .observerLifetime)
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE users (
                      id INTEGER PRIMARY KEY,
                      username TEXT NOT NULL UNIQUE,
                      kdf TEXT NOT NULL,
                      salt BLOB NOT NULL,
                      hash BLOB NOT NULL,
                      failures INTEGER NOT NULL DEFAULT 0,
                      postponedUntil REAL,
                      locked INTEGER NOT NULL DEFAULT 0,
                      publicKey BLOB NOT NULL
                    );
                    CREATE TABLE chats (
                      id INTEGER PRIMARY KEY,
                      userA INTEGER NOT NULL REFERENCES users(id),
                      userB INTEGER NOT NULL REFERENCES users(id),
                      keyVersion INTEGER NOT NULL,
                      UNIQUE (userA, userB),
                      CHECK (userA < userB)
                    );
                    CREATE TABLE chatKeys (
                      chatId INTEGER NOT NULL REFERENCES chats(id),
                      userId INTEGER NOT NULL REFERENCES users(id),
                      wrappedKey BLOB NOT NULL,
                      PRIMARY KEY (chatId, userId)
                    );
                    CREATE TABLE messages (
                      id INTEGER PRIMARY KEY,
                      chatId INTEGER NOT NULL REFERENCES chats(id),
                      senderId INTEGER NOT NULL REFERENCES users(id),
                      keyVersion INTEGER NOT NULL,
                      ciphertext BLOB NOT NULL
                    );
                    CREATE INDEX messagesByChat ON messages (chatId, id);
                    """
            )
        }
        // A rekey sent in pages (docs/protocol.md §4.6): the pages already received, kept
        // until the last one lands (or the sender starts again).
        migrator.registerMigration("v2") { db in
            try db.execute(
                sql: """
                    CREATE TABLE rekeyPages (
                      chatId INTEGER NOT NULL REFERENCES chats(id),
                      userId INTEGER NOT NULL REFERENCES users(id),
                      keyVersion INTEGER NOT NULL,
                      page INTEGER NOT NULL,
                      messageId INTEGER NOT NULL,
                      ciphertext BLOB NOT NULL,
                      PRIMARY KEY (chatId, userId, messageId)
                    );
                    """
            )
        }
        // The chat's last message id when page 0 was staged: a message sent after it, while
        // the pages arrive, makes the last page `conflict`.
        migrator.registerMigration("v3") { db in
            try db.execute(sql: "ALTER TABLE rekeyPages ADD COLUMN startedAfter INTEGER NOT NULL DEFAULT 0")
        }
        return migrator
    }

    /// An account as stored.
    public struct Account: Sendable, Equatable {
        public var id: Int64
        public var username: String
        public var kdf: String
        public var salt: [UInt8]
        public var hash: [UInt8]
        public var state: LoginState
        public var publicKey: [UInt8]

        init(row: Row) {
            self.id = row["id"]
            self.username = row["username"]
            self.kdf = row["kdf"]
            self.salt = Array(row["salt"] as Data)
            self.hash = Array(row["hash"] as Data)
            let until: Double? = row["postponedUntil"]
            self.state = LoginState(
                failures: row["failures"],
                postponedUntil: until.map(Date.init(timeIntervalSince1970:)),
                locked: row["locked"] as Bool
            )
            self.publicKey = Array(row["publicKey"] as Data)
        }
    }

    /// Runs a read, turning database errors into `storage` errors.
    func read<T: Sendable>(_ body: @Sendable @escaping (Database) throws -> T) async throws -> T {
        do {
            return try await self.pool.read(body)
        } catch let error as LabError {
            throw error
        } catch let error as MsgFailure {
            throw error
        } catch {
            throw LabError(.storage, "A read of the message store failed", cause: UnderlyingError(describing: error))
        }
    }

    /// Runs a write transaction, turning database errors into `storage` errors.
    func write<T: Sendable>(_ body: @Sendable @escaping (Database) throws -> T) async throws -> T {
        do {
            return try await self.pool.write(body)
        } catch let error as LabError {
            throw error
        } catch let error as MsgFailure {
            throw error
        } catch {
            throw LabError(.storage, "A write to the message store failed", cause: UnderlyingError(describing: error))
        }
    }

    static func account(_ db: Database, username: String) throws -> Account? {
        try Row.fetchOne(db, sql: "SELECT * FROM users WHERE username = ?", arguments: [username]).map(Account.init)
    }

    static func account(_ db: Database, id: Int64) throws -> Account? {
        try Row.fetchOne(db, sql: "SELECT * FROM users WHERE id = ?", arguments: [id]).map(Account.init)
    }

    /// The account called `username`, if any.
    public func account(named username: String) async throws -> Account? {
        try await self.read { db in try Self.account(db, username: username) }
    }

    static func save(_ db: Database, state: LoginState, of id: Int64) throws {
        try db.execute(
            sql: "UPDATE users SET failures = ?, postponedUntil = ?, locked = ? WHERE id = ?",
            arguments: [state.failures, state.postponedUntil?.timeIntervalSince1970, state.locked, id]
        )
    }

    /// The ordered pair of user ids a chat is stored under.
    static func pair(_ a: Int64, _ b: Int64) -> (Int64, Int64) { a < b ? (a, b) : (b, a) }

    /// The chat between two users: its id and key version.
    static func chat(_ db: Database, _ a: Int64, _ b: Int64) throws -> (id: Int64, version: Int)? {
        let (low, high) = Self.pair(a, b)
        guard
            let row = try Row.fetchOne(
                db,
                sql: "SELECT id, keyVersion FROM chats WHERE userA = ? AND userB = ?",
                arguments: [low, high]
            )
        else { return nil }
        return (row["id"], row["keyVersion"])
    }

    /// Counts of what the store holds, for reports and tests.
    public struct Counts: Sendable, Equatable {
        public var users: Int
        public var chats: Int
        public var messages: Int
    }

    /// How many users, chats and messages the store holds.
    public func counts() async throws -> Counts {
        try await self.read { db in
            Counts(
                users: try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM users") ?? 0,
                chats: try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM chats") ?? 0,
                messages: try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM messages") ?? 0
            )
        }
    }
}
