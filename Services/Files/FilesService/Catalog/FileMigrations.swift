import PostgresSupport

/// files-service's tables, in the `files` schema.
enum FileMigrations {
    /// Every migration, in order.
    static let all: [any DatabaseMigration] = [
        m0001CreateEntries, m0002CreatePermissions, m0003CreateRenditions, m0004PermissionOperation,
    ]

    /// The tree of every app (one row per file or directory, keyed by its normalised path in
    /// byte order, so a directory's contents are one index range) and the stored objects no
    /// row names any more, removed once their grace period ends.
    static let m0001CreateEntries = SQLMigration(
        version: 1, name: "file entries and storage garbage",
        statements: [
            "CREATE SCHEMA files",
            """
            CREATE TABLE files.entries (
                app_id text NOT NULL,
                path text COLLATE "C" NOT NULL,
                parent text COLLATE "C" NOT NULL,
                name text COLLATE "C" NOT NULL,
                is_directory boolean NOT NULL,
                size bigint NOT NULL DEFAULT 0,
                content_type text,
                storage_key text,
                created bigint NOT NULL,
                updated bigint NOT NULL,
                owner_id text,
                PRIMARY KEY (app_id, path),
                CHECK (is_directory = (storage_key IS NULL))
            )
            """,
            "CREATE INDEX entries_by_parent ON files.entries (app_id, parent, name)",
            """
            CREATE TABLE files.garbage (
                storage_key text PRIMARY KEY,
                app_id text NOT NULL,
                due bigint NOT NULL
            )
            """,
            "CREATE INDEX garbage_by_due ON files.garbage (due)",
        ])

    /// GRANT and DENY cells on paths: per user or role (`*` for every one), per operation.
    static let m0002CreatePermissions = SQLMigration(
        version: 2, name: "file permissions",
        statements: [
            """
            CREATE TABLE files.permissions (
                app_id text NOT NULL,
                path text COLLATE "C" NOT NULL,
                principal_kind text NOT NULL CHECK (principal_kind IN ('user', 'role')),
                principal text NOT NULL,
                operation text NOT NULL CHECK (operation IN ('READ', 'WRITE', 'DELETE')),
                decision text NOT NULL CHECK (decision IN ('GRANT', 'DENY')),
                PRIMARY KEY (app_id, path, principal_kind, principal, operation)
            )
            """
        ])

    /// Resized copies of images, each kept beside its original's object and named by the size
    /// asked for; they go with the original's object to the garbage.
    static let m0003CreateRenditions = SQLMigration(
        version: 3, name: "image renditions",
        statements: [
            """
            CREATE TABLE files.renditions (
                original_key text NOT NULL,
                rendition text NOT NULL,
                storage_key text NOT NULL,
                size bigint NOT NULL,
                content_type text NOT NULL,
                PRIMARY KEY (original_key, rendition)
            )
            """
        ])

    /// A cell may govern who changes a path's permissions (``FileOperation/permission``).
    static let m0004PermissionOperation = SQLMigration(
        version: 4, name: "file permission cells for changing permissions",
        statements: [
            "ALTER TABLE files.permissions DROP CONSTRAINT permissions_operation_check",
            """
            ALTER TABLE files.permissions ADD CONSTRAINT permissions_operation_check
                CHECK (operation IN ('READ', 'WRITE', 'DELETE', 'PERMISSION'))
            """,
        ])
}
