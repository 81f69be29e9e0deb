import DataEngine
import Foundation
import InternalProtocol
import PostgresNIO

/// SQL over `users.sessions`: sessions are keyed by the SHA-256 of their token and live while
/// used within the app's inactivity timeout. Ending sessions announces the user on
/// ``SessionsChannel`` so that caches of resolved tokens drop them.
enum Sessions {
    static func insert(
        appID: String, userID: String, token: String, now: Date, guest: Bool = false, session: DatabaseSession
    ) async throws {
        var sql = SQL("INSERT INTO users.sessions (token_hash, app_id, user_id, created, last_seen, guest) VALUES (")
        sql.bind(all: [
            .text(SessionToken.hash(token)), .text(appID), .text(userID), .timestamp(now), .timestamp(now),
            .boolean(guest),
        ])
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
        if policy.rejectExtraLogins {
            return policy.maxSessions == 1 ? UserError.alreadyLoggedIn : UserError.loginLimit
        }
        let ending = Array(hashes[(policy.maxSessions - 1)...])
        var delete = SQL("DELETE FROM users.sessions WHERE token_hash IN (")
        delete.bind(all: ending.map(SQLValue.text))
        delete.append(")")
        _ = try await session.rows(delete)
        try await announce(appID: appID, userID: userID, session: session)
        return nil
    }

    /// How stale a session's recorded activity may get before a resolution writes it again:
    /// a busy token costs a write a minute, not one per request.
    static let activitySlack: Double = 60

    /// A live session: its user, the user's custom roles, the stored id and whether it is a guest's.
    struct Live: Sendable {
        let userID: String
        let roles: [String]
        let sessionID: String
        let guest: Bool
    }

    /// The live session `token` names, counting as activity; nil when there is none. One
    /// statement reads the session and the user's roles and refreshes stale activity.
    static func resolve(appID: String, token: String, now: Date, session: DatabaseSession) async throws -> Live? {
        try await resolve(appID: appID, sessionID: SessionToken.hash(token), now: now, session: session)
    }

    /// The live session stored as `sessionID` (a token's hash), as ``resolve(appID:token:now:session:)``.
    static func resolve(appID: String, sessionID: String, now: Date, session: DatabaseSession) async throws -> Live? {
        var sql = SQL(
            "WITH live AS (SELECT s.token_hash, s.user_id, s.last_seen, s.guest FROM users.sessions s WHERE s.token_hash = "
        )
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
        sql.append("))), touched AS (UPDATE users.sessions t SET last_seen = ")
        sql.bind(.timestamp(now))
        sql.append(" FROM live WHERE t.token_hash = live.token_hash AND live.last_seen < ")
        sql.bind(.timestamp(now.addingTimeInterval(-activitySlack)))
        sql.append(") SELECT live.user_id, ARRAY(SELECT r.role_name FROM users.user_roles r WHERE r.app_id = ")
        sql.bind(.text(appID))
        sql.append(" AND r.user_id = live.user_id ORDER BY r.role_name), live.guest FROM live")
        guard let row = try await session.rows(sql).first else { return nil }
        let (userID, roles, guest) = try row.decode((String, [String], Bool).self)
        return Live(userID: userID, roles: roles, sessionID: sessionID, guest: guest)
    }

    /// Ends every session of the user but `keeping` (all of them when nil) and announces it.
    static func endAll(appID: String, userID: String, keeping: String?, session: DatabaseSession) async throws {
        var sql = SQL("DELETE FROM users.sessions")
        Credentials.whereUser(appID, userID, into: &sql)
        if let keeping {
            sql.append(" AND token_hash <> ")
            sql.bind(.text(keeping))
        }
        _ = try await session.rows(sql)
        try await announce(appID: appID, userID: userID, session: session)
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

    /// Tells every gateway that the user's sessions or roles changed.
    static func announce(appID: String, userID: String, session: DatabaseSession) async throws {
        var notify = SQL("SELECT pg_notify('\(SessionsChannel.name)', ")
        notify.bind(.text(SessionsChannel.payload(appID: appID, userID: userID)))
        notify.append(")")
        _ = try await session.rows(notify)
    }

    /// A converted guest's sessions are a registered user's from now on.
    static func endGuestStatus(appID: String, userID: String, session: DatabaseSession) async throws {
        var sql = SQL("UPDATE users.sessions SET guest = false")
        Credentials.whereUser(appID, userID, into: &sql)
        _ = try await session.rows(sql)
        try await announce(appID: appID, userID: userID, session: session)
    }
}
