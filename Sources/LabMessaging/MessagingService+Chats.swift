import Crypto
import Foundation
import GRDB
import LabCore
import LabWire
import Logging
import Synchronization

extension MessagingService {
    // MARK: Chats

    func peer(
        _ request: PropertyListDictionary,
        _ key: String,
        of session: Session
    ) async throws
        -> MessagingStore.Account
    {
        let name = try Self.username(request, key)
        guard name != session.username else {
            throw MsgFailure(code: .badRequest, message: "A chat needs two different users")
        }
        guard let account = try await self.store.account(named: name) else {
            throw MsgFailure(code: .unknownUser, message: "No user '\(name)'")
        }
        return account
    }

    func openChat(_ request: PropertyListDictionary) async throws {
        let session = try self.session(request)
        let peer = try await self.peer(request, MsgKey.with, of: session)
        let mine = try self.wrappedKey(request, MsgKey.wrappedKeySelf)
        let theirs = try self.wrappedKey(request, MsgKey.wrappedKeyPeer)
        let created = try await self.store.write { db -> Bool in
            guard try MessagingStore.chat(db, session.userID, peer.id) == nil else { return false }
            let (low, high) = MessagingStore.pair(session.userID, peer.id)
            try db.execute(
                sql: "INSERT INTO chats (userA, userB, keyVersion) VALUES (?, ?, 1)",
                arguments: [low, high]
            )
            let chat = db.lastInsertedRowID
            for (user, wrapped) in [(session.userID, mine), (peer.id, theirs)] {
                try db.execute(
                    sql: "INSERT INTO chatKeys (chatId, userId, wrappedKey) VALUES (?, ?, ?)",
                    arguments: [chat, user, Data(wrapped)]
                )
            }
            return true
        }
        guard created else { throw MsgFailure(code: .exists, message: "A chat with '\(peer.username)' exists") }
    }

    func send(_ request: PropertyListDictionary) async throws -> Int64 {
        let session = try self.session(request)
        let peer = try await self.peer(request, MsgKey.to, of: session)
        let ciphertext = try Self.ciphertext(try Self.field { try request.data(MsgKey.ciphertext) })
        let version = try Self.field { try request.integer(MsgKey.keyVersion) }
        return try await self.store.write { db -> Int64 in
            guard let chat = try MessagingStore.chat(db, session.userID, peer.id) else {
                throw MsgFailure(code: .noChat, message: "No chat with '\(peer.username)' yet; open one")
            }
            guard chat.version == version else {
                throw MsgFailure(
                    code: .conflict,
                    message: "The chat key is at version \(chat.version), not \(version); fetch it again"
                )
            }
            try db.execute(
                sql: "INSERT INTO messages (chatId, senderId, keyVersion, ciphertext) VALUES (?, ?, ?, ?)",
                arguments: [chat.id, session.userID, version, Data(ciphertext)]
            )
            return db.lastInsertedRowID
        }
    }

    func fetch(_ request: PropertyListDictionary, into answer: inout PropertyListDictionary) async throws {
        let session = try self.session(request)
        let peer = try await self.peer(request, MsgKey.with, of: session)
        let after = Int64(try Self.field { try request.optionalInteger(MsgKey.after) } ?? 0)
        let limit = try Self.field { try request.optionalInteger(MsgKey.limit) } ?? MsgLimits.fetchLimit
        guard after >= 0, (1...MsgLimits.fetchLimit).contains(limit) else {
            throw MsgFailure(
                code: .badRequest,
                message: "'after' must be 0 or more and 'limit' 1 to \(MsgLimits.fetchLimit)"
            )
        }
        let me = session
        // A page ends before the answer would pass the transport's frame limit (the rest of
        // the answer, the wrapped key included, takes well under 4 KiB); one message always fits.
        // And within what the pages being made for every request may hold at once: under
        // that pressure a page is smaller (`more` says the rest follows), one message at least.
        // A page in the making is held twice (the messages read, then packed), so it takes
        // twice its bytes.
        let allowance = self.pagesInMaking.take(upTo: 2 * max(0, self.maxAnswerBytes - 4_096))
        defer { allowance.give() }
        let budget = allowance.bytes / 2
        let (version, wrapped, messages, more) = try await self.store.read {
            db -> (Int, [UInt8], [StoredMessage], Bool) in
            guard let chat = try MessagingStore.chat(db, me.userID, peer.id) else {
                throw MsgFailure(code: .noChat, message: "No chat with '\(peer.username)' yet; open one")
            }
            let wrapped =
                try Data.fetchOne(
                    db,
                    sql: "SELECT wrappedKey FROM chatKeys WHERE chatId = ? AND userId = ?",
                    arguments: [chat.id, me.userID]
                ) ?? Data()
            // One row past the limit tells whether more follow.
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT messages.id, messages.keyVersion, messages.ciphertext, users.username
                    FROM messages JOIN users ON users.id = messages.senderId
                    WHERE chatId = ? AND messages.id > ? ORDER BY messages.id LIMIT ?
                    """,
                arguments: [chat.id, after, limit + 1]
            )
            var messages: [StoredMessage] = []
            var bytes = 0
            var more = false
            while let row = try rows.next() {
                let message = StoredMessage(
                    id: row["id"],
                    sender: row["username"],
                    keyVersion: row["keyVersion"],
                    ciphertext: Array(row["ciphertext"] as Data)
                )
                let size = MessagePacking.packedSize(message)
                guard messages.count < limit, messages.isEmpty || bytes + size <= budget else {
                    more = true
                    break
                }
                messages.append(message)
                bytes += size
            }
            return (chat.version, Array(wrapped), messages, more)
        }
        answer.set(MsgKey.keyVersion, integer: version)
        answer.set(MsgKey.wrappedKey, data: wrapped)
        answer.set(MsgKey.messages, data: MessagePacking.pack(messages))
        answer.set(MsgKey.count, integer: messages.count)
        answer.set(MsgKey.more, bool: more)
    }

    /// A rekey, whole or one page of it (docs/protocol.md §4.6): the new key version once it
    /// lands; for a page with more to come, the chat's version, unchanged.
    func rekey(_ request: PropertyListDictionary) async throws -> (version: Int, staged: Int?) {
        let session = try self.session(request)
        let peer = try await self.peer(request, MsgKey.with, of: session)
        let version = try Self.field { try request.integer(MsgKey.keyVersion) }
        let mine = try self.wrappedKey(request, MsgKey.wrappedKeySelf)
        let theirs = try self.wrappedKey(request, MsgKey.wrappedKeyPeer)
        let page = try Self.field { try request.optionalInteger(MsgKey.page) }
        let more = try Self.field { try request.optionalBool(MsgKey.more) } ?? false
        guard page.map({ $0 >= 0 }) ?? !more else {
            throw MsgFailure(code: .badRequest, message: "'page' is 0 or more, and 'more' needs a 'page'")
        }
        let records: [(id: Int64, ciphertext: [UInt8])]
        do {
            records = try MessagePacking.unpackReencrypted(try Self.field { try request.data(MsgKey.messages) })
        } catch let error as LabError {
            throw MsgFailure(code: .badRequest, message: error.message)
        }
        for record in records { _ = try Self.ciphertext(record.ciphertext) }
        let me = session.userID
        // A refusal is returned, not thrown, so that the transaction that drops what was
        // staged commits (a throw rolled the drop back: a refused last page left its pages).
        let outcome = try await self.store.write { db -> Result<(version: Int, staged: Int?), MsgFailure> in
            guard let chat = try MessagingStore.chat(db, me, peer.id) else {
                return .failure(MsgFailure(code: .noChat, message: "No chat with '\(peer.username)' yet; open one"))
            }
            // A refusal drops what this user staged for the chat: the rekey starts again.
            func refuse(_ message: String) throws -> Result<(version: Int, staged: Int?), MsgFailure> {
                try db.execute(sql: "DELETE FROM rekeyPages WHERE chatId = ? AND userId = ?", arguments: [chat.id, me])
                return .failure(MsgFailure(code: .conflict, message: message))
            }
            guard chat.version == version else {
                return try refuse("The chat key is at version \(chat.version), not \(version); fetch it again")
            }
            if page == 0 || page == nil {
                try db.execute(sql: "DELETE FROM rekeyPages WHERE chatId = ? AND userId = ?", arguments: [chat.id, me])
            }
            if let page, page > 0 {
                let last = try Int.fetchOne(
                    db,
                    sql: "SELECT MAX(page) FROM rekeyPages WHERE chatId = ? AND userId = ? AND keyVersion = ?",
                    arguments: [chat.id, me, version]
                )
                guard last == page - 1 else {
                    return try refuse(
                        "Page \(page) of a rekey does not follow page \(last.map(String.init) ?? "none"); start again at page 0"
                    )
                }
            }
            // The chat's last message when the rekey began (page 0's), or now for one request.
            let startedAfter =
                try Int64.fetchOne(
                    db,
                    sql: "SELECT MAX(startedAfter) FROM rekeyPages WHERE chatId = ? AND userId = ?",
                    arguments: [chat.id, me]
                )
                ?? Int64.fetchOne(db, sql: "SELECT MAX(id) FROM messages WHERE chatId = ?", arguments: [chat.id]) ?? 0
            // Each re-encrypted message has the length of the one it replaces (the same text
            // under another key): what is staged never outgrows the chat.
            let lengths = Dictionary(
                uniqueKeysWithValues: try Row.fetchAll(
                    db,
                    sql: "SELECT id, length(ciphertext) AS bytes FROM messages WHERE chatId = ?",
                    arguments: [chat.id]
                ).map { ($0["id"] as Int64, $0["bytes"] as Int) }
            )
            for record in records {
                guard let length = lengths[record.id] else {
                    return try refuse("Message \(record.id) is not in this chat; fetch again")
                }
                guard length == record.ciphertext.count else {
                    return try refuse(
                        "Message \(record.id) is \(length) bytes in the chat and \(record.ciphertext.count) in the rekey; a rekey keeps each message's length"
                    )
                }
            }
            if more, let page {
                // Staged: each a message of this chat, once.
                let insert = try db.makeStatement(
                    sql: """
                        INSERT OR ABORT INTO rekeyPages (chatId, userId, keyVersion, page, messageId, ciphertext, startedAfter)
                        VALUES (?, ?, ?, ?, ?, ?, ?)
                        """
                )
                for record in records {
                    do {
                        try insert.execute(
                            arguments: [chat.id, me, version, page, record.id, Data(record.ciphertext), startedAfter]
                        )
                    } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
                        return try refuse("Message \(record.id) comes twice in the rekey")
                    }
                }
                let staged = try Int.fetchOne(
                    db,
                    sql: "SELECT COUNT(*) FROM rekeyPages WHERE chatId = ? AND userId = ?",
                    arguments: [chat.id, me]
                ) ?? 0
                return .success((version, staged))
            }
            // The last page (or the whole rekey): the staged pages and this one must cover
            // exactly the chat's messages: none missed, none foreign, none twice, none sent
            // since the rekey began.
            let staged = try Row.fetchAll(
                db,
                sql: "SELECT messageId, ciphertext FROM rekeyPages WHERE chatId = ? AND userId = ?",
                arguments: [chat.id, me]
            ).map { (id: $0["messageId"] as Int64, ciphertext: Array($0["ciphertext"] as Data)) }
            try db.execute(sql: "DELETE FROM rekeyPages WHERE chatId = ? AND userId = ?", arguments: [chat.id, me])
            if let newer = lengths.keys.filter({ $0 > startedAfter }).min() {
                return try refuse("Message \(newer) was sent to the chat after the rekey began; fetch again")
            }
            let all = staged + records
            let ids = Set(lengths.keys)
            guard ids.count == all.count, Set(all.map(\.id)) == ids else {
                return try refuse(
                    "The chat has \(ids.count) messages and the rekey carries \(all.count) that do not match them; fetch again"
                )
            }
            let next = version + 1
            let update = try db.makeStatement(sql: "UPDATE messages SET ciphertext = ?, keyVersion = ? WHERE id = ?")
            for record in all {
                try update.execute(arguments: [Data(record.ciphertext), next, record.id])
            }
            for (user, wrapped) in [(me, mine), (peer.id, theirs)] {
                try db.execute(
                    sql: "UPDATE chatKeys SET wrappedKey = ? WHERE chatId = ? AND userId = ?",
                    arguments: [Data(wrapped), chat.id, user]
                )
            }
            try db.execute(sql: "UPDATE chats SET keyVersion = ? WHERE id = ?", arguments: [next, chat.id])
            return .success((next, nil))
        }
        return try outcome.get()
    }
}
