import DataEngine
import Foundation
import PostgresNIO

/// SQL over `users.credentials`: the password hash and the failed-login counters of a user.
enum Credentials {
    /// What login needs of a user's credentials.
    struct Row: Sendable {
        let hash: String
        let lockedUntil: Date?
    }

    /// Stores the first password of a user; false when the user already has one.
    static func insert(appID: String, userID: String, hash: String, session: DatabaseSession) async throws -> Bool {
        var sql = SQL("INSERT INTO users.credentials (app_id, user_id, password_hash) VALUES (")
        sql.bind(all: [.text(appID), .text(userID), .text(hash)])
        sql.append(") ON CONFLICT DO NOTHING RETURNING user_id")
        return try await !session.column(sql, as: String.self).isEmpty
    }

    /// Sets the user's password hash (a guest has none yet) and clears the failure counters.
    static func store(appID: String, userID: String, hash: String, session: DatabaseSession) async throws {
        var sql = SQL("INSERT INTO users.credentials (app_id, user_id, password_hash) VALUES (")
        sql.bind(all: [.text(appID), .text(userID), .text(hash)])
        sql.append(
            """
            ) ON CONFLICT (app_id, user_id) DO UPDATE SET password_hash = excluded.password_hash,
            failed_logins = 0, first_failure = NULL, locked_until = NULL
            """)
        _ = try await session.rows(sql)
    }

    /// The user's credentials; with `lock`, locked for the rest of the transaction (logins of
    /// one user then commit one at a time, so session limits and failure counts never race).
    static func read(appID: String, userID: String, lock: Bool, session: DatabaseSession) async throws -> Row? {
        var sql = SQL("SELECT password_hash, locked_until FROM users.credentials")
        whereUser(appID, userID, into: &sql)
        if lock { sql.append(" FOR UPDATE") }
        guard let row = try await session.rows(sql).first else { return nil }
        let (hash, lockedUntil) = try row.decode((String, Date?).self)
        return Row(hash: hash, lockedUntil: lockedUntil)
    }

    /// Counts a failed login: failures within the window accumulate, and reaching the limit
    /// locks the account until `now + lockout`.
    static func recordFailure(
        appID: String, userID: String, policy: UserPolicy, now: Date, session: DatabaseSession
    ) async throws {
        var sql = SQL(
            "UPDATE users.credentials SET failed_logins = CASE WHEN first_failure IS NULL OR first_failure < ")
        sql.bind(.timestamp(now.addingTimeInterval(-Double(policy.failureWindowSeconds))))
        sql.append(
            " THEN 1 ELSE failed_logins + 1 END, first_failure = CASE WHEN first_failure IS NULL OR first_failure < ")
        sql.bind(.timestamp(now.addingTimeInterval(-Double(policy.failureWindowSeconds))))
        sql.append(" THEN ")
        sql.bind(.timestamp(now))
        sql.append(" ELSE first_failure END")
        whereUser(appID, userID, into: &sql)
        sql.append(" RETURNING failed_logins")
        let failures = try await session.column(sql, as: Int.self).first ?? 0
        guard failures >= policy.maxFailedLogins else { return }
        var lock = SQL("UPDATE users.credentials SET failed_logins = 0, first_failure = NULL, locked_until = ")
        lock.bind(.timestamp(now.addingTimeInterval(Double(policy.lockoutSeconds))))
        whereUser(appID, userID, into: &lock)
        _ = try await session.rows(lock)
    }

    /// Clears the failure counters after a successful login.
    static func recordSuccess(appID: String, userID: String, session: DatabaseSession) async throws {
        var sql = SQL("UPDATE users.credentials SET failed_logins = 0, first_failure = NULL, locked_until = NULL")
        whereUser(appID, userID, into: &sql)
        _ = try await session.rows(sql)
    }

    /// ` WHERE app_id = $n AND user_id = $m`.
    static func whereUser(_ appID: String, _ userID: String, into sql: inout SQL) {
        sql.append(" WHERE app_id = ")
        sql.bind(.text(appID))
        sql.append(" AND user_id = ")
        sql.bind(.text(userID))
    }
}
