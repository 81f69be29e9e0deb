import DataEngine
import InternalProtocol
import PostgresNIO

/// An app's user policy: the identity property, whether registration is open, session
/// inactivity timeout, lockout after failed logins and the multiple-login rule. Apps without a
/// row get the defaults of `users.policies`.
struct UserPolicy: Sendable, Equatable {
    var identityProperty = "email"
    var registrationEnabled = true
    var sessionTimeoutSeconds = 1_209_600
    var maxFailedLogins = 5
    var failureWindowSeconds = 900
    var lockoutSeconds = 900
    /// Live sessions a user may hold; a login beyond it ends the oldest, or with
    /// ``rejectExtraLogins`` is refused (3002 when the limit is 1, else 3044).
    var maxSessions = 1
    var rejectExtraLogins = false

    /// The app's policy as stored, or the defaults.
    static func load(appID: String, session: DatabaseSession) async throws -> UserPolicy {
        var sql = SQL(
            """
            SELECT identity_property, registration_enabled, session_timeout_seconds, max_failed_logins,
            failure_window_seconds, lockout_seconds, max_sessions, reject_extra_logins FROM users.policies WHERE app_id =
            """)
        sql.bind(.text(appID))
        guard let row = try await session.rows(sql).first else { return UserPolicy() }
        var policy = UserPolicy()
        (
            policy.identityProperty, policy.registrationEnabled, policy.sessionTimeoutSeconds, policy.maxFailedLogins,
            policy.failureWindowSeconds, policy.lockoutSeconds, policy.maxSessions, policy.rejectExtraLogins
        ) = try row.decode((String, Bool, Int, Int, Int, Int, Int, Bool).self)
        return policy
    }
}
