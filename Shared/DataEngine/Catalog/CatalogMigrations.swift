import InternalProtocol
import PostgresSupport

/// The data catalog's tables: per-app settings, app tables and their columns' Backendless
/// metadata. App rows themselves live in one schema per app (`app_<id>`), created on demand.
package enum CatalogMigrations {
    /// All catalog migrations in order.
    package static let all: [any DatabaseMigration] = [
        m0001CreateCatalog, m0002CatalogVersion, m0003JSONOperations, m0004Permissions, m0005ACLUsage,
        m0006Relations, m0007ParentReferences, m0008FileURLs, m0009Geo, m0010WatchedTables,
        m0011DeletedUsers,
    ]

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

    /// The security model's store: global and table permissions per user and role, each
    /// table's owner policy, and object ACLs. Table names are stored lower-cased; the global
    /// matrix has table name ''. A missing row is INHERIT.
    static let m0004Permissions = SQLMigration(
        version: 4, name: "permissions, owner policies and object ACLs",
        statements: [
            """
            CREATE TABLE data.permissions (
                app_id text NOT NULL,
                table_name text NOT NULL,
                principal_kind text NOT NULL CHECK (principal_kind IN ('user', 'role')),
                principal text NOT NULL,
                operation text NOT NULL,
                decision text NOT NULL CHECK (decision IN ('GRANT', 'DENY')),
                PRIMARY KEY (app_id, table_name, principal_kind, principal, operation))
            """,
            """
            CREATE TABLE data.owner_policies (
                app_id text NOT NULL,
                table_name text NOT NULL,
                operation text NOT NULL,
                decision text NOT NULL CHECK (decision IN ('GRANT', 'DENY')),
                PRIMARY KEY (app_id, table_name, operation))
            """,
            """
            CREATE TABLE data.object_acl (
                app_id text NOT NULL,
                table_name text NOT NULL,
                object_id text NOT NULL,
                principal_kind text NOT NULL CHECK (principal_kind IN ('user', 'role')),
                principal text NOT NULL,
                operation text NOT NULL,
                decision text NOT NULL CHECK (decision IN ('GRANT', 'DENY')),
                PRIMARY KEY (app_id, table_name, object_id, operation, principal_kind, principal))
            """,
        ])

    /// Which operations each table's object ACLs name, kept by a trigger whatever writes the
    /// ACL: the first cell for a table and operation records the pair, bumps the app's catalog
    /// version and announces it, so every instance starts asking the ACL for that operation.
    /// Pairs are never removed (a stale pair costs a look-up, never a wrong answer).
    static let m0005ACLUsage = SQLMigration(
        version: 5, name: "object ACL usage per table and operation",
        statements: [
            // Writers wait until the trigger exists, so the backfill cannot miss an ACL cell
            // committed between its snapshot and the trigger (a rolling deploy's old instance).
            "LOCK TABLE data.object_acl IN SHARE ROW EXCLUSIVE MODE",
            """
            CREATE TABLE data.acl_usage (
                app_id text NOT NULL,
                table_name text NOT NULL,
                operation text NOT NULL,
                PRIMARY KEY (app_id, table_name, operation))
            """,
            """
            CREATE FUNCTION data.record_acl_usage() RETURNS trigger
            LANGUAGE plpgsql AS $$
            DECLARE
              version bigint;
            BEGIN
              INSERT INTO data.acl_usage (app_id, table_name, operation)
              VALUES (NEW.app_id, NEW.table_name, NEW.operation)
              ON CONFLICT DO NOTHING;
              IF FOUND THEN
                INSERT INTO data.settings (app_id, catalog_version) VALUES (NEW.app_id, 1)
                ON CONFLICT (app_id) DO UPDATE SET catalog_version = data.settings.catalog_version + 1
                RETURNING catalog_version INTO version;
                PERFORM pg_notify('\(CatalogChannel.name)', NEW.app_id || ' ' || version);
              END IF;
              RETURN NULL;
            END
            $$
            """,
            """
            CREATE TRIGGER object_acl_usage AFTER INSERT OR UPDATE ON data.object_acl
            FOR EACH ROW EXECUTE FUNCTION data.record_acl_usage()
            """,
            """
            INSERT INTO data.acl_usage (app_id, table_name, operation)
            SELECT DISTINCT app_id, table_name, operation FROM data.object_acl
            """,
        ])

    /// Relation columns: rows of `data.columns` of type DATA_REF name their child table, their
    /// cardinality (`1` or `n`), whether finds load them, and the link table that holds them.
    static let m0006Relations = SQLMigration(
        version: 6, name: "relation columns",
        statements: [
            """
            ALTER TABLE data.columns
              ADD COLUMN related_table text,
              ADD COLUMN cardinality text CHECK (cardinality IN ('1', 'n')),
              ADD COLUMN auto_load boolean NOT NULL DEFAULT false,
              ADD COLUMN link_table text,
              ADD CHECK ((type = 'DATA_REF') = (related_table IS NOT NULL AND cardinality IS NOT NULL AND link_table IS NOT NULL))
            """,
            // Finding the relations that point at a table (dropping it drops them).
            "CREATE INDEX columns_related ON data.columns (app_id, lower(related_table)) WHERE related_table IS NOT NULL",
        ])

    /// QuickBlox's `_parent_id` is a strong reference: deleting objects deletes, in each of `tables`
    /// (those with a `_parent_id` column the caller may remove any row of), the objects whose
    /// `_parent_id` names one of them, and so on down (a deleted object is never deleted twice, so
    /// the walk ends). Answers how many went.
    static let m0007ParentReferences = SQLMigration(
        version: 7, name: "QuickBlox parent references",
        statements: [
            """
            CREATE FUNCTION data.delete_children(app text, app_schema text, parents text[], tables text[]) RETURNS bigint
            LANGUAGE plpgsql AS $$
            DECLARE
              child_table text;
              removed text[];
              level text[];
              total bigint := 0;
            BEGIN
              WHILE cardinality(parents) > 0 LOOP
                level := '{}';
                FOR child_table IN
                  SELECT table_name FROM data.columns
                  WHERE app_id = app AND name = '\(ParentReference.column)' AND table_name = ANY(tables)
                LOOP
                  EXECUTE format(
                    'WITH d AS (DELETE FROM %I.%I WHERE "\(ParentReference.column)" = ANY($1) RETURNING "objectId") '
                    || 'SELECT coalesce(array_agg("objectId"), ''{}'') FROM d', app_schema, child_table)
                  INTO removed USING parents;
                  level := level || removed;
                END LOOP;
                total := total + cardinality(level);
                parents := level;
              END LOOP;
              RETURN total;
            END
            $$
            """
        ])

    /// Helpers for the update operators (``FieldOperation``), with MySQL's JSON semantics.
    static let m0003JSONOperations = SQLMigration(
        version: 3, name: "JSON update operators",
        statements: [
            // JSON_SET / JSON_INSERT / JSON_REPLACE of one path: write always, only where
            // nothing is, or only where something is. Missing parents are left alone.
            """
            CREATE FUNCTION data.json_write(doc jsonb, path text[], value jsonb, mode text) RETURNS jsonb
            LANGUAGE sql IMMUTABLE AS $$
              SELECT CASE
                WHEN mode = 'insert' AND doc #> path IS NOT NULL THEN doc
                WHEN mode = 'replace' AND doc #> path IS NULL THEN doc
                WHEN cardinality(path) = 0 THEN value
                ELSE jsonb_set(doc, path, value, mode <> 'replace')
              END
            $$
            """,
            // JSON_ARRAY_APPEND: appends to the array at path; a scalar there becomes an array.
            """
            CREATE FUNCTION data.json_array_append(doc jsonb, path text[], value jsonb) RETURNS jsonb
            LANGUAGE sql IMMUTABLE AS $$
              SELECT CASE
                WHEN doc #> path IS NULL THEN doc
                WHEN jsonb_typeof(doc #> path) = 'array' AND cardinality(path) = 0 THEN doc || jsonb_build_array(value)
                WHEN cardinality(path) = 0 THEN jsonb_build_array(doc, value)
                WHEN jsonb_typeof(doc #> path) = 'array' THEN jsonb_set(doc, path, (doc #> path) || jsonb_build_array(value))
                ELSE jsonb_set(doc, path, jsonb_build_array(doc #> path, value))
              END
            $$
            """,
            // The array operators' input: an array, null as [], anything else refused.
            """
            CREATE FUNCTION data.json_array(doc jsonb) RETURNS jsonb
            LANGUAGE plpgsql IMMUTABLE AS $$
            BEGIN
              IF doc IS NULL THEN RETURN '[]'::jsonb; END IF;
              IF jsonb_typeof(doc) <> 'array' THEN
                RAISE EXCEPTION 'the column does not hold a JSON array' USING ERRCODE = '22023';
              END IF;
              RETURN doc;
            END
            $$
            """,
        ])

    /// FILE_REF columns answer URLs: a stored path percent-encoded name by name (RFC 3986
    /// unreserved characters and `/` stay), as files-service writes the URLs of its answers.
    static let m0008FileURLs = SQLMigration(
        version: 8, name: "file reference URLs",
        statements: [
            """
            CREATE FUNCTION data.file_url_path(path text) RETURNS text
            LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
              SELECT CASE WHEN path ~ '^[A-Za-z0-9._~/-]*$' THEN path ELSE (
                SELECT string_agg(
                  CASE WHEN c ~ '^[A-Za-z0-9._~/-]$' THEN c
                  ELSE regexp_replace(upper(encode(convert_to(c, 'UTF8'), 'hex')), '(..)', '%\\1', 'g') END,
                  '' ORDER BY i)
                FROM regexp_split_to_table(path, '') WITH ORDINALITY AS t(c, i))
              END
            $$
            """
        ])

    /// Geo in data queries. A table is a real table (`table`) or the app's view of geo-service's
    /// points (`geo`), which data queries read and relations point at but no data write touches.
    /// `data.distance` is where clauses' `distance(lat, lon, lat, lon)`: metres along the great
    /// circle (haversine) on the sphere geo-service searches, of mean radius 6,371,008.7714 m.
    static let m0009Geo = SQLMigration(
        version: 9, name: "geo points in data queries",
        statements: [
            "ALTER TABLE data.tables ADD COLUMN kind text NOT NULL DEFAULT 'table' CHECK (kind IN ('table', 'geo'))",
            """
            CREATE FUNCTION data.distance(lat1 double precision, lon1 double precision, lat2 double precision,
                lon2 double precision) RETURNS double precision
            LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
                SELECT 2 * 6371008.7714 * asin(least(1, sqrt(
                    power(sin(radians(lat2 - lat1) / 2), 2)
                    + cos(radians(lat1)) * cos(radians(lat2)) * power(sin(radians(lon2 - lon1) / 2), 2))))
            $$
            """,
        ])

    /// Tables a real-time instance watches (their writes emit change events while
    /// `watched_until` is ahead), and the publication change readers decode the log with: it
    /// names no table, so the decoder hands out only the logical messages writes emit.
    static let m0010WatchedTables = SQLMigration(
        version: 10, name: "watched tables and the change publication",
        statements: [
            """
            CREATE TABLE data.watched_tables (
                app_id text NOT NULL,
                table_name text NOT NULL,
                watched_until timestamptz NOT NULL,
                PRIMARY KEY (app_id, table_name))
            """,
            "CREATE PUBLICATION \(ChangeSlot.publication)",
        ])

    /// A deleted `Users` row ends its user's sessions (``DeletedUsers``).
    static let m0011DeletedUsers = SQLMigration(
        version: 11, name: "deleted users lose their sessions",
        statements: [DeletedUsers.function, DeletedUsers.attachToExisting])
}
