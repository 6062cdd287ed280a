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
        let budget = max(0, self.maxAnswerBytes - 4_096)
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

    func rekey(_ request: PropertyListDictionary) async throws -> Int {
        let session = try self.session(request)
        let peer = try await self.peer(request, MsgKey.with, of: session)
        let version = try Self.field { try request.integer(MsgKey.keyVersion) }
        let mine = try self.wrappedKey(request, MsgKey.wrappedKeySelf)
        let theirs = try self.wrappedKey(request, MsgKey.wrappedKeyPeer)
        let records: [(id: Int64, ciphertext: [UInt8])]
        do {
            records = try MessagePacking.unpackReencrypted(try Self.field { try request.data(MsgKey.messages) })
        } catch let error as LabError {
            throw MsgFailure(code: .badRequest, message: error.message)
        }
        for record in records { _ = try Self.ciphertext(record.ciphertext) }
        return try await self.store.write { db -> Int in
            guard let chat = try MessagingStore.chat(db, session.userID, peer.id) else {
                throw MsgFailure(code: .noChat, message: "No chat with '\(peer.username)' yet; open one")
            }
            guard chat.version == version else {
                throw MsgFailure(
                    code: .conflict,
                    message: "The chat key is at version \(chat.version), not \(version); fetch it again"
                )
            }
            // The new ciphertexts must cover exactly the chat's messages: none missed, none foreign.
            let ids = Set(try Int64.fetchAll(db, sql: "SELECT id FROM messages WHERE chatId = ?", arguments: [chat.id]))
            guard ids.count == records.count, Set(records.map(\.id)) == ids else {
                throw MsgFailure(
                    code: .conflict,
                    message:
                        "The chat has \(ids.count) messages and the rekey carries \(records.count) that do not match them; fetch again"
                )
            }
            let next = version + 1
            let update = try db.makeStatement(sql: "UPDATE messages SET ciphertext = ?, keyVersion = ? WHERE id = ?")
            for record in records {
                try update.execute(arguments: [Data(record.ciphertext), next, record.id])
            }
            for (user, wrapped) in [(session.userID, mine), (peer.id, theirs)] {
                try db.execute(
                    sql: "UPDATE chatKeys SET wrappedKey = ? WHERE chatId = ? AND userId = ?",
                    arguments: [Data(wrapped), chat.id, user]
                )
            }
            try db.execute(sql: "UPDATE chats SET keyVersion = ? WHERE id = ?", arguments: [next, chat.id])
            return next
        }
    }
}
