import DataEngine
import Foundation
import InternalProtocol

/// SQL over `users.sessions`: sessions are keyed by the SHA-256 of their token and live while
/// used within the app's inactivity timeout. Ending sessions announces the user on
/// ``channel`` so that caches of resolved tokens drop them.
enum Sessions {
    /// The channel session ends are announced on; the payload is `<app id> <user id>`.
    static let channel = "baas_sessions"

    static func insert(appID: String, userID: String, token: String, now: Date, session: DatabaseSession) async throws {
        var sql = SQL("INSERT INTO users.sessions (token_hash, app_id, user_id, created, last_seen) VALUES (")
        sql.bind(all: [.text(SessionToken.hash(token)), .text(appID), .text(userID), .timestamp(now), .timestamp(now)])
        sql.append(")")
        _ = try await session.rows(sql)
    }

    /// Drops the user's expired sessions and, when the live ones fill the policy's limit,
    /// ends the oldest — or refuses the login when the policy says so.
    static func makeRoom(
        appID: String, userID: String, policy: UserPolicy, now: Date, session: DatabaseSession
    ) async throws -> ErrorEnvelope? {
        var expired = SQL("DELETE FROM users.sessions")
        Credentials.whereUser(appID, userID, into: &expired)
        expired.append(" AND last_seen <= ")
        expired.bind(.timestamp(now.addingTimeInterval(-Double(policy.sessionTimeoutSeconds))))
        _ = try await session.rows(expired)
        var live = SQL("SELECT token_hash FROM users.sessions")
        Credentials.whereUser(appID, userID, into: &live)
        live.append(" ORDER BY created DESC")
        let hashes = try await session.column(live, as: String.self)
        guard hashes.count >= policy.maxSessions else { return nil }
        if policy.rejectExtraLogins { return policy.maxSessions == 1 ? UserError.alreadyLoggedIn : UserError.loginLimit }
        let ending = Array(hashes[(policy.maxSessions - 1)...])
        var delete = SQL("DELETE FROM users.sessions WHERE token_hash IN (")
        delete.bind(all: ending.map(SQLValue.text))
        delete.append(")")
        _ = try await session.rows(delete)
        try await announce(appID: appID, userID: userID, session: session)
        return nil
    }

    /// The live session's user and stored id, marking it used; nil when the token names no
    /// live session.
    static func resolve(appID: String, token: String, now: Date, session: DatabaseSession) async throws
        -> (userID: String, sessionID: String)?
    {
        let sessionID = SessionToken.hash(token)
        var sql = SQL("UPDATE users.sessions s SET last_seen = ")
        sql.bind(.timestamp(now))
        sql.append(" WHERE s.token_hash = ")
        sql.bind(.text(sessionID))
        sql.append(" AND s.app_id = ")
        sql.bind(.text(appID))
        sql.append(" AND s.last_seen > ")
        sql.bind(.timestamp(now))
        sql.append(
            """
             - make_interval(secs => COALESCE((SELECT p.session_timeout_seconds FROM users.policies p
             WHERE p.app_id = s.app_id),
            """)
        sql.bind(.integer(Int64(UserPolicy().sessionTimeoutSeconds)))
        sql.append(")) RETURNING s.user_id")
        guard let userID = try await session.column(sql, as: String.self).first else { return nil }
        return (userID, sessionID)
    }

    /// Ends the session stored as `sessionID`; false when there was none.
    static func end(appID: String, sessionID: String, session: DatabaseSession) async throws -> Bool {
        var sql = SQL("DELETE FROM users.sessions WHERE token_hash = ")
        sql.bind(.text(sessionID))
        sql.append(" AND app_id = ")
        sql.bind(.text(appID))
        sql.append(" RETURNING user_id")
        guard let userID = try await session.column(sql, as: String.self).first else { return false }
        try await announce(appID: appID, userID: userID, session: session)
        return true
    }

    private static func announce(appID: String, userID: String, session: DatabaseSession) async throws {
        var notify = SQL("SELECT pg_notify('\(channel)', ")
        notify.bind(.text(appID + " " + userID))
        notify.append(")")
        _ = try await session.rows(notify)
    }
}
