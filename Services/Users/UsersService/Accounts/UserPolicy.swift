import DataEngine
import InternalProtocol
import PostgresNIO

/// An app's user policy: the identity property, whether registration is open, session
/// inactivity timeout, lockout after failed logins and the multiple-login rule. Apps without a
/// row get the defaults of `users.policies`.
struct UserPolicy: Sendable, Equatable, Codable {
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
    /// New users start EMAIL_CONFIRMATION_PENDING and are mailed a confirmation link.
    var emailConfirmation = false
    /// How long a password-reset link works.
    var resetTokenSeconds = 3_600
    /// How long a confirmation link works.
    var confirmationTokenSeconds = 172_800

    /// The app's policy as stored, or the defaults.
    static func load(appID: String, session: DatabaseSession) async throws -> UserPolicy {
        var sql = SQL(
            """
            SELECT identity_property, registration_enabled, session_timeout_seconds, max_failed_logins,
            failure_window_seconds, lockout_seconds, max_sessions, reject_extra_logins, email_confirmation,
            reset_token_seconds, confirmation_token_seconds FROM users.policies WHERE app_id =
            """)
        sql.bind(.text(appID))
        guard let row = try await session.rows(sql).first else { return UserPolicy() }
        var policy = UserPolicy()
        (
            policy.identityProperty, policy.registrationEnabled, policy.sessionTimeoutSeconds, policy.maxFailedLogins,
            policy.failureWindowSeconds, policy.lockoutSeconds, policy.maxSessions, policy.rejectExtraLogins,
            policy.emailConfirmation, policy.resetTokenSeconds, policy.confirmationTokenSeconds
        ) = try row.decode((String, Bool, Int, Int, Int, Int, Int, Bool, Bool, Int, Int).self)
        return policy
    }

    /// The largest number a setting may hold (ten years in seconds; the columns are `integer`).
    static let settingLimit = 315_360_000

    /// 400 unless every number is positive and within ``settingLimit``, and the identity
    /// property can name a column.
    func validate() throws {
        let numbers = [
            sessionTimeoutSeconds, maxFailedLogins, failureWindowSeconds, lockoutSeconds, maxSessions,
            resetTokenSeconds,
            confirmationTokenSeconds,
        ]
        guard numbers.allSatisfy({ (1...Self.settingLimit).contains($0) }) else {
            throw ErrorEnvelope.badRequest("User settings must be numbers from 1 to \(Self.settingLimit)")
        }
        let reserved: Set<String> = [
            "password", "objectid", "created", "updated", "ownerid", "userstatus", "lastlogin",
        ]
        guard identityProperty.wholeMatch(of: /[A-Za-z][A-Za-z0-9_]{0,62}/) != nil,
            !reserved.contains(identityProperty.lowercased())
        else { throw ErrorEnvelope.badRequest("'\(identityProperty)' cannot be the identity property") }
    }

    /// Stores the policy as the app's.
    func save(appID: String, session: DatabaseSession) async throws {
        var sql = SQL(
            """
            INSERT INTO users.policies (app_id, identity_property, registration_enabled, session_timeout_seconds,
            max_failed_logins, failure_window_seconds, lockout_seconds, max_sessions, reject_extra_logins,
            email_confirmation, reset_token_seconds, confirmation_token_seconds) VALUES (
            """)
        sql.bind(all: [
            .text(appID), .text(identityProperty), .boolean(registrationEnabled),
            .integer(Int64(sessionTimeoutSeconds)),
            .integer(Int64(maxFailedLogins)), .integer(Int64(failureWindowSeconds)), .integer(Int64(lockoutSeconds)),
            .integer(Int64(maxSessions)), .boolean(rejectExtraLogins), .boolean(emailConfirmation),
            .integer(Int64(resetTokenSeconds)), .integer(Int64(confirmationTokenSeconds)),
        ])
        sql.append(
            """
            ) ON CONFLICT (app_id) DO UPDATE SET identity_property = excluded.identity_property,
            registration_enabled = excluded.registration_enabled, session_timeout_seconds = excluded.session_timeout_seconds,
            max_failed_logins = excluded.max_failed_logins, failure_window_seconds = excluded.failure_window_seconds,
            lockout_seconds = excluded.lockout_seconds, max_sessions = excluded.max_sessions,
            reject_extra_logins = excluded.reject_extra_logins, email_confirmation = excluded.email_confirmation,
            reset_token_seconds = excluded.reset_token_seconds, confirmation_token_seconds = excluded.confirmation_token_seconds
            """)
        _ = try await session.rows(sql)
    }
}
