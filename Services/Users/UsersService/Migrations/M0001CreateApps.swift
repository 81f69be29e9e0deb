import PostgresSupport

extension UsersService {
    /// The platform's apps and their API keys (one per client kind, stored as SHA-256 hashes).
    static let m0001CreateApps = SQLMigration(
        version: 1, name: "create platform apps and api keys",
        statements: [
            """
            CREATE TABLE platform.apps (
                id uuid PRIMARY KEY,
                name text NOT NULL UNIQUE CHECK (length(name) BETWEEN 1 AND 200),
                created_at timestamptz NOT NULL DEFAULT now())
            """,
            """
            CREATE TABLE platform.api_keys (
                app_id uuid NOT NULL REFERENCES platform.apps (id) ON DELETE CASCADE,
                kind text NOT NULL CHECK (kind IN ('REST', 'JS', 'ANDROID', 'IOS', 'DOTNET', 'AS', 'SERVER_CODE')),
                key_hash text NOT NULL UNIQUE,
                created_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (app_id, kind))
            """,
        ])
}
