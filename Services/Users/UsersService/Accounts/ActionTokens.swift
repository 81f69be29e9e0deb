import DataEngine
import Foundation
import PostgresNIO

/// SQL over `users.action_tokens`: single-use, expiring tokens mailed to users to reset a
/// password or confirm an address. Only their SHA-256 is stored, with the address the token was
/// mailed to; a new token of a purpose replaces the user's earlier one (expired ones included),
/// using a token deletes it, and a new email address deletes those mailed to another.
enum ActionTokens {
    enum Purpose: String {
        case reset, confirm
    }

    /// Whom a token was issued for: the user and the address it was mailed to (nil for a token
    /// issued before addresses were recorded).
    struct Holder: Sendable, Equatable {
        let userID: String
        let address: String?
    }

    /// A new token for the user, mailed to `address`, valid until `expires`.
    static func issue(
        appID: String, userID: String, address: String, purpose: Purpose, expires: Date, session: DatabaseSession
    ) async throws -> String {
        let token = SessionToken.generate()
        // One transaction: two concurrent requests must not leave two live tokens.
        try await session.transaction { session in
            var earlier = SQL("DELETE FROM users.action_tokens")
            Credentials.whereUser(appID, userID, into: &earlier)
            earlier.append(" AND purpose = ")
            earlier.bind(.text(purpose.rawValue))
            _ = try await session.rows(earlier)
            var sql = SQL(
                "INSERT INTO users.action_tokens (token_hash, app_id, user_id, purpose, expires, address) VALUES (")
            sql.bind(all: [
                .text(SessionToken.hash(token)), .text(appID), .text(userID), .text(purpose.rawValue),
                .timestamp(expires),
                .text(address),
            ])
            sql.append(")")
            _ = try await session.rows(sql)
        }
        return token
    }

    /// The holder of the token when it is live for `purpose` (without using it), else nil.
    static func holder(appID: String, token: String, purpose: Purpose, now: Date, session: DatabaseSession) async throws
        -> Holder?
    {
        var sql = SQL("SELECT user_id, address FROM users.action_tokens")
        whereToken(appID, token, purpose, into: &sql)
        sql.append(" AND expires > ")
        sql.bind(.timestamp(now))
        guard let row = try await session.rows(sql).first else { return nil }
        let (userID, address) = try row.decode((String, String?).self)
        return Holder(userID: userID, address: address)
    }

    /// Uses the token: its holder when it is live and of `purpose`, nil otherwise.
    static func consume(
        appID: String, token: String, purpose: Purpose, now: Date, session: DatabaseSession
    ) async throws -> Holder? {
        var sql = SQL("DELETE FROM users.action_tokens")
        whereToken(appID, token, purpose, into: &sql)
        sql.append(" RETURNING user_id, address, expires")
        guard let row = try await session.rows(sql).first else { return nil }
        let (userID, address, expires) = try row.decode((String, String?, Date).self)
        return expires > now ? Holder(userID: userID, address: address) : nil
    }

    /// Deletes the user's tokens of every purpose mailed to any address but `address` (all of
    /// them when nil): a link dies with the address it was sent to, even if that address
    /// comes back later.
    static func revoke(appID: String, userID: String, keeping address: String?, session: DatabaseSession) async throws {
        var sql = SQL("DELETE FROM users.action_tokens")
        Credentials.whereUser(appID, userID, into: &sql)
        if let address {
            sql.append(" AND (address IS NULL OR address <> ")
            sql.bind(.text(address))
            sql.append(")")
        }
        _ = try await session.rows(sql)
    }

    /// ` WHERE` the row is `token`'s for `purpose` in the app.
    private static func whereToken(_ appID: String, _ token: String, _ purpose: Purpose, into sql: inout SQL) {
        sql.append(" WHERE token_hash = ")
        sql.bind(.text(SessionToken.hash(token)))
        sql.append(" AND app_id = ")
        sql.bind(.text(appID))
        sql.append(" AND purpose = ")
        sql.bind(.text(purpose.rawValue))
    }
}
