import PostgresSupport

extension UsersService {
    /// Email confirmation and password reset: the policy switches, single-use action tokens
    /// (stored as SHA-256 like sessions) and each app's edited email templates.
    static let m0004CreateEmailActions = SQLMigration(
        version: 4, name: "create email action tokens and templates",
        statements: [
            """
            ALTER TABLE users.policies
                ADD COLUMN email_confirmation boolean NOT NULL DEFAULT false,
                ADD COLUMN reset_token_seconds integer NOT NULL DEFAULT 3600 CHECK (reset_token_seconds > 0),
                ADD COLUMN confirmation_token_seconds integer NOT NULL DEFAULT 172800
                    CHECK (confirmation_token_seconds > 0)
            """,
            """
            CREATE TABLE users.action_tokens (
                token_hash text PRIMARY KEY,
                app_id text NOT NULL,
                user_id text NOT NULL,
                purpose text NOT NULL CHECK (purpose IN ('reset', 'confirm')),
                expires timestamptz NOT NULL)
            """,
            "CREATE INDEX action_tokens_by_user ON users.action_tokens (app_id, user_id, purpose)",
            """
            CREATE TABLE users.email_templates (
                app_id text NOT NULL,
                event text NOT NULL,
                subject text NOT NULL,
                text_body text NOT NULL,
                html_body text NOT NULL,
                enabled boolean NOT NULL DEFAULT true,
                PRIMARY KEY (app_id, event))
            """,
        ])
}
