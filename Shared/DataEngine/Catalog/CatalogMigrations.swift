import PostgresSupport

/// The data catalog's tables: per-app settings, app tables and their columns' Backendless
/// metadata. App rows themselves live in one schema per app (`app_<id>`), created on demand.
public enum CatalogMigrations {
    /// All catalog migrations in order.
    public static let all: [any DatabaseMigration] = [m0001CreateCatalog, m0002CatalogVersion]

    static let m0001CreateCatalog = SQLMigration(
        version: 1, name: "create the data catalog",
        statements: [
            "CREATE SCHEMA data",
            """
            CREATE TABLE data.settings (
                app_id text PRIMARY KEY,
                dynamic_schema boolean NOT NULL DEFAULT true)
            """,
            """
            CREATE TABLE data.tables (
                app_id text NOT NULL,
                name text NOT NULL,
                created timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (app_id, name))
            """,
            "CREATE UNIQUE INDEX tables_name_ci ON data.tables (app_id, lower(name))",
            """
            CREATE TABLE data.columns (
                app_id text NOT NULL,
                table_name text NOT NULL,
                name text NOT NULL,
                type text NOT NULL,
                required boolean NOT NULL DEFAULT false,
                is_unique boolean NOT NULL DEFAULT false,
                indexed boolean NOT NULL DEFAULT false,
                default_value text,
                position serial,
                PRIMARY KEY (app_id, table_name, name),
                FOREIGN KEY (app_id, table_name) REFERENCES data.tables ON DELETE CASCADE)
            """,
            "CREATE UNIQUE INDEX columns_name_ci ON data.columns (app_id, table_name, lower(name))",
        ])

    /// Every schema change bumps the app's catalog version, so a cache can tell an announcement
    /// of a change it already holds from one it has not seen.
    static let m0002CatalogVersion = SQLMigration(
        version: 2, name: "version app catalogs",
        statements: ["ALTER TABLE data.settings ADD COLUMN catalog_version bigint NOT NULL DEFAULT 0"])
}
