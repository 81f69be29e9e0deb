import PostgresSupport

extension UsersService {
    /// Per-app user policy, password credentials and sessions. Profiles are rows of the app's
    /// `Users` data table; credentials and sessions never leave this schema, and sessions are
    /// stored under the SHA-256 of their token.
    static let m0002CreateAccounts = SQLMigration(
        version: 2, name: "create user credentials, sessions and policies",
        statements: [
            "CREATE SCHEMA users",
            """
            CREATE TABLE users.policies (
                app_id text PRIMARY KEY,
                identity_property text NOT NULL DEFAULT 'email',
                registration_enabled boolean NOT NULL DEFAULT true,
                session_timeout_seconds integer NOT NULL DEFAULT 1209600 CHECK (session_timeout_seconds > 0),
                max_failed_logins integer NOT NULL DEFAULT 5 CHECK (max_failed_logins > 0),
                failure_window_seconds integer NOT NULL DEFAULT 900 CHECK (failure_window_seconds > 0),
                lockout_seconds integer NOT NULL DEFAULT 900 CHECK (lockout_seconds > 0),
                max_sessions integer NOT NULL DEFAULT 1 CHECK (max_sessions > 0),
                reject_extra_logins boolean NOT NULL DEFAULT false)
            """,
            """
            CREATE TABLE users.credentials (
                app_id text NOT NULL,
                user_id text NOT NULL,
                password_hash text NOT NULL,
                failed_logins integer NOT NULL DEFAULT 0,
                first_failure timestamptz,
                locked_until timestamptz,
                PRIMARY KEY (app_id, user_id))
            """,
            """
            CREATE TABLE users.sessions (
                token_hash text PRIMARY KEY,
                app_id text NOT NULL,
                user_id text NOT NULL,
                created timestamptz NOT NULL,
                last_seen timestamptz NOT NULL)
            """,
            "CREATE INDEX sessions_by_user ON users.sessions (app_id, user_id, created)",
        ])
}
