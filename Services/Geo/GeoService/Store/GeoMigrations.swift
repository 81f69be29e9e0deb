import PostgresSupport

/// geo-service's tables, in the `geo` schema (PostGIS lives in `public`).
enum GeoMigrations {
    /// Every migration, in order.
    static let all: [any DatabaseMigration] = [
        m0001CreatePoints, m0002CreateFences, m0003PointKeys, m0004CategoryPermissions,
    ]

    /// Points on the sphere with their categories and metadata, and each app's categories.
    /// Two GiST indexes: on the geography (radius searches, `ST_DWithin`) and on its plain
    /// longitude/latitude geometry (rectangles, whose edges are parallels and meridians, not
    /// the great circles a geography box has).
    static let m0001CreatePoints = SQLMigration(
        version: 1, name: "geo points and categories",
        statements: [
            "CREATE SCHEMA geo",
            """
            CREATE TABLE geo.points (
                app_id text NOT NULL,
                object_id text NOT NULL,
                location public.geography(Point, 4326) NOT NULL,
                categories text[] NOT NULL CHECK (cardinality(categories) > 0),
                metadata jsonb NOT NULL DEFAULT '{}',
                created bigint NOT NULL,
                updated bigint,
                owner_id text,
                PRIMARY KEY (app_id, object_id)
            )
            """,
            "CREATE INDEX points_on_sphere ON geo.points USING gist (location)",
            "CREATE INDEX points_on_plane ON geo.points USING gist ((location::public.geometry))",
            "CREATE INDEX points_by_category ON geo.points USING gin (categories)",
            """
            CREATE TABLE geo.categories (
                app_id text NOT NULL,
                name text NOT NULL,
                object_id text NOT NULL,
                created bigint NOT NULL,
                PRIMARY KEY (app_id, name)
            )
            """,
            // A metadata value as a number: JSON numbers and strings that spell one (the SDKs
            // send both), anything else NULL, so a numeric comparison never fails on a row. The
            // pattern's digit and exponent bounds keep every match inside a double's range.
            #"""
            CREATE FUNCTION geo.metadata_number(value jsonb) RETURNS double precision
            LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
                SELECT CASE jsonb_typeof(value)
                    WHEN 'number' THEN (value #>> '{}')::double precision
                    WHEN 'string' THEN CASE WHEN (value #>> '{}') ~ '^\s*[-+]?([0-9]{1,200}\.?[0-9]{0,200}|\.[0-9]{1,200})([eE][-+]?[0-9]{1,2})?\s*$'
                        THEN (value #>> '{}')::double precision END
                END
            $$
            """#,
        ])

    /// Geofences (a circle, a rectangle or a polygon, kept as the client described it), which
    /// points are inside each by the last enter and exit actions, and the events actions
    /// recorded.
    static let m0002CreateFences = SQLMigration(
        version: 2, name: "geofences",
        statements: [
            """
            CREATE TABLE geo.fences (
                app_id text NOT NULL,
                name text NOT NULL,
                object_id text NOT NULL,
                definition jsonb NOT NULL,
                created bigint NOT NULL,
                PRIMARY KEY (app_id, name)
            )
            """,
            """
            CREATE TABLE geo.fence_presence (
                app_id text NOT NULL,
                fence text NOT NULL,
                point_id text NOT NULL,
                entered bigint NOT NULL,
                PRIMARY KEY (app_id, fence, point_id),
                FOREIGN KEY (app_id, fence) REFERENCES geo.fences ON DELETE CASCADE
            )
            """,
            """
            CREATE TABLE geo.fence_events (
                id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                app_id text NOT NULL,
                fence text NOT NULL,
                event text NOT NULL CHECK (event IN ('onenter', 'onstay', 'onexit')),
                point_id text,
                at bigint NOT NULL,
                FOREIGN KEY (app_id, fence) REFERENCES geo.fences ON DELETE CASCADE
            )
            """,
            "CREATE INDEX fence_events_by_fence ON geo.fence_events (app_id, fence, id)",
        ])

    /// Point ids are UUIDs, unique across apps: data relations to geo points (link tables in each
    /// app's schema) reference `object_id` alone, so deleting a point removes it from them.
    static let m0003PointKeys = SQLMigration(
        version: 3, name: "point ids referenced by data relations",
        statements: ["CREATE UNIQUE INDEX points_by_id ON geo.points (object_id)"])

    /// Categories as permission containers (``CategoryRules``): cells per user, role or owner
    /// policy (kind `owner`) and operation; the category lower-cased, `''` the global matrix.
    static let m0004CategoryPermissions = SQLMigration(
        version: 4, name: "geo category permissions",
        statements: [
            """
            CREATE TABLE geo.category_permissions (
                app_id text NOT NULL,
                category text NOT NULL,
                principal_kind text NOT NULL CHECK (principal_kind IN ('user', 'role', 'owner')),
                principal text NOT NULL,
                operation text NOT NULL CHECK (operation IN ('FIND', 'ADD', 'REMOVE')),
                decision text NOT NULL CHECK (decision IN ('GRANT', 'DENY')),
                PRIMARY KEY (app_id, category, principal_kind, principal, operation)
            )
            """
        ])
}
