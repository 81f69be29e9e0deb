import InternalProtocol
import Logging
import PostgresNIO

/// Changes app schemas. Every change for one app runs under an in-process lock and, inside
/// its transaction, a PostgreSQL advisory lock for that app, so two requests or two instances
/// never race; the change re-reads the catalog under the lock, applies only what is still
/// missing, announces itself on ``CatalogChannel`` and refreshes the local cache.
struct SchemaEditor: Sendable {
    let session: DatabaseSession
    let cache: CatalogCache
    let locks: KeyedLock

    /// Runs `change` on the app's freshly read catalog under both locks and returns the
    /// catalog as committed.
    func change(
        appID: String, _ change: @Sendable (DatabaseSession, AppCatalog) async throws -> Void
    ) async throws -> AppCatalog {
        try await self.change(appID: appID, change) { _, catalog in catalog }
    }

    /// Runs `change` as ``change(appID:_:)`` does, then `then` on the changed catalog in the same
    /// transaction: both commit, or neither does.
    func change<Result: Sendable>(
        appID: String, _ change: @Sendable (DatabaseSession, AppCatalog) async throws -> Void,
        then: (DatabaseSession, AppCatalog) async throws -> Result
    ) async throws -> Result {
        let (catalog, result) = try await locks.withLock(appID) {
            try await session.transaction { session in
                var lock = SQL("SELECT pg_advisory_xact_lock(hashtext(")
                lock.bind(.text("baas-ddl:" + appID))
                lock.append("))")
                _ = try await session.rows(lock)
                try await change(session, try await CatalogStore.load(appID: appID, session: session))
                let version = try await CatalogStore.bumpVersion(appID: appID, session: session)
                var notify = SQL("SELECT pg_notify('\(CatalogChannel.name)', ")
                notify.bind(.text(CatalogChannel.payload(appID: appID, version: version)))
                notify.append(")")
                _ = try await session.rows(notify)
                let catalog = try await CatalogStore.load(appID: appID, session: session)
                return (catalog, try await then(session, catalog))
            }
        }
        await cache.store(catalog)
        return result
    }

    /// Creates `table` when missing, then adds each of `columns` the table lacks.
    static func ensure(
        table: String, columns: [ColumnSchema], in catalog: AppCatalog, session: DatabaseSession
    ) async throws {
        var existing = catalog.table(named: table)
        if existing == nil {
            try await createTable(table, schema: catalog.schemaName, appID: catalog.appID, session: session)
            existing = TableSchema(name: table, columns: ColumnSchema.system)
        }
        guard let existing else { return }
        try existing.requireWritable()
        let added = columns.filter { !existing.hasProperty(named: $0.name) }
        try ColumnLimits.checkTable(existing.name, existing: existing.propertyCount, adding: added.count)
        for column in added {
            try await addColumn(column, table: existing.name, catalog: catalog, session: session)
        }
    }

    static func createTable(_ table: String, schema: String, appID: String, session: DatabaseSession) async throws {
        guard Identifier.isValid(table) else { throw DataError.invalidName(table) }
        guard !GeoPointTable.isNamed(table) else { throw DataError.geoPointsReadOnly }
        try await session.execute("CREATE SCHEMA IF NOT EXISTS \(SQL.quoted(schema))")
        var create = SQL("CREATE TABLE ")
        create.table(schema, table)
        create.append(
            """
             ("objectId" text PRIMARY KEY, "created" timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now()),
             "updated" timestamptz, "ownerId" text)
            """)
        _ = try await session.rows(create)
        var index = SQL("CREATE INDEX ON ")
        index.table(schema, table)
        index.append(" (\"created\", \"objectId\")")
        _ = try await session.rows(index)
        try await DeletedUsers.attach(table: table, schema: schema, appID: appID, session: session)
        var record = SQL("INSERT INTO data.tables (app_id, name) VALUES (")
        record.bind(.text(appID))
        record.append(", ")
        record.bind(.text(table))
        record.append(")")
        _ = try await session.rows(record)
    }

    static func addColumn(_ column: ColumnSchema, table: String, catalog: AppCatalog, session: DatabaseSession)
        async throws
    {
        guard Identifier.isValid(column.name) else { throw DataError.invalidName(column.name) }
        var alter = SQL("ALTER TABLE ")
        alter.table(catalog.schemaName, table)
        alter.append(" ADD COLUMN ")
        alter.identifier(column.name)
        alter.append(" " + column.type.sqlType)
        if column.required { alter.append(" NOT NULL") }
        _ = try await session.rows(alter)
        if column.unique {
            try await setIndex(.unique, on: true, column: column.name, table: table, catalog: catalog, session: session)
        }
        if column.indexed {
            try await setIndex(.plain, on: true, column: column.name, table: table, catalog: catalog, session: session)
        }
        var record = SQL(
            "INSERT INTO data.columns (app_id, table_name, name, type, required, is_unique, indexed, default_value) VALUES ("
        )
        let values: [SQLValue] = [
            .text(catalog.appID), .text(table), .text(column.name), .text(column.type.rawValue),
            .boolean(column.required), .boolean(column.unique), .boolean(column.indexed),
            column.defaultValue.map { .text($0.jsonText) } ?? .null("text"),
        ]
        record.bind(all: values)
        record.append(")")
        _ = try await session.rows(record)
    }

    /// ` WHERE …` selecting one column's row in `data.columns`.
    static func whereColumn(appID: String, table: String, column: String, into sql: inout SQL) {
        sql.append(" WHERE app_id = ")
        sql.bind(.text(appID))
        sql.append(" AND table_name = ")
        sql.bind(.text(table))
        sql.append(" AND name = ")
        sql.bind(.text(column))
    }

    enum IndexKind: String {
        case unique = "uq"
        case plain = "ix"
    }

    /// Creates or drops the column's unique or plain index, named by a hash of table and column.
    static func setIndex(
        _ kind: IndexKind, on: Bool, column: String, table: String, catalog: AppCatalog, session: DatabaseSession
    ) async throws {
        let name = indexName(kind, table: table, column: column)
        if on {
            var create = SQL(kind == .unique ? "CREATE UNIQUE INDEX " : "CREATE INDEX ")
            create.identifier(name)
            create.append(" ON ")
            create.table(catalog.schemaName, table)
            create.append(" (")
            create.identifier(column)
            create.append(")")
            _ = try await session.rows(create)
        } else {
            var drop = SQL("DROP INDEX IF EXISTS ")
            drop.table(catalog.schemaName, name)
            _ = try await session.rows(drop)
        }
    }

    static func indexName(_ kind: IndexKind, table: String, column: String) -> String {
        hashedName(kind.rawValue, table: table, column: column)
    }

    /// `prefix_` and 16 hex digits of a hash of the table and the lower-cased column: a name
    /// within PostgreSQL's 63 bytes whatever the two names' lengths.
    static func hashedName(_ prefix: String, table: String, column: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in "\(table)\u{0}\(column.lowercased())".utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return prefix + "_" + String(repeating: "0", count: 16 - hex.count) + hex
    }
}
