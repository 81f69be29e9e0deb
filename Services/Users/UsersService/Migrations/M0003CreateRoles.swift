import PostgresSupport

extension UsersService {
    /// Custom (developer-defined) roles per app and their members. System roles are never
    /// stored: they follow from the request's key and token.
    static let m0003CreateRoles = SQLMigration(
        version: 3, name: "create custom roles and role membership",
        statements: [
            """
            CREATE TABLE users.roles (
                app_id text NOT NULL,
                name text NOT NULL,
                created timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (app_id, name))
            """,
            """
            CREATE TABLE users.user_roles (
                app_id text NOT NULL,
                user_id text NOT NULL,
                role_name text NOT NULL,
                PRIMARY KEY (app_id, user_id, role_name),
                FOREIGN KEY (app_id, role_name) REFERENCES users.roles (app_id, name) ON DELETE CASCADE)
            """,
            "CREATE INDEX user_roles_by_role ON users.user_roles (app_id, role_name)",
        ])
}
