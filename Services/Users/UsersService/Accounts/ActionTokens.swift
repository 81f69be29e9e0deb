import DataEngine
import Foundation
import PostgresNIO

/// SQL over `users.action_tokens`: single-use, expiring tokens mailed to users to reset a
/// password or confirm an address. Only their SHA-256 is stored; a new token of a purpose
/// replaces the user's earlier one (expired ones included), and using a token deletes it.
enum ActionTokens {
    enum Purpose: String {
        case reset, confirm
    }

    /// A new token for the user, valid until `expires`.
    static func issue(
        appID: String, userID: String, purpose: Purpose, expires: Date, session: DatabaseSession
    ) async throws -> String {
        let token = SessionToken.generate()
        // One transaction: two concurrent requests must not leave two live tokens.
        try await session.transaction { session in
            var earlier = SQL("DELETE FROM users.action_tokens")
            Credentials.whereUser(appID, userID, into: &earlier)
            earlier.append(" AND purpose = ")
            earlier.bind(.text(purpose.rawValue))
            _ = try await session.rows(earlier)
            var sql = SQL("INSERT INTO users.action_tokens (token_hash, app_id, user_id, purpose, expires) VALUES (")
            sql.bind(all: [
                .text(SessionToken.hash(token)), .text(appID), .text(userID), .text(purpose.rawValue), .timestamp(expires),
            ])
            sql.append(")")
            _ = try await session.rows(sql)
        }
        return token
    }

    /// Whether the token is live for `purpose` (without using it).
    static func isLive(appID: String, token: String, purpose: Purpose, now: Date, session: DatabaseSession) async throws
        -> Bool
    {
        var sql = SQL("SELECT user_id FROM users.action_tokens")
        whereToken(appID, token, purpose, into: &sql)
        sql.append(" AND expires > ")
        sql.bind(.timestamp(now))
        return try await !session.column(sql, as: String.self).isEmpty
    }

    /// Uses the token: its user when it is live and of `purpose`, nil otherwise.
    static func consume(
        appID: String, token: String, purpose: Purpose, now: Date, session: DatabaseSession
    ) async throws -> String? {
        var sql = SQL("DELETE FROM users.action_tokens")
        whereToken(appID, token, purpose, into: &sql)
        sql.append(" RETURNING user_id, expires")
        guard let row = try await session.rows(sql).first else { return nil }
        let (userID, expires) = try row.decode((String, Date).self)
        return expires > now ? userID : nil
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
