import Foundation
import InternalProtocol
import Logging
import Permissions
import QueryLanguage

/// Where a write runs and on whose behalf.
struct WriteContext: Sendable {
    let session: DatabaseSession
    let identity: Identity
    /// False inside a unit of work: a schema change there would wait on the transaction's
    /// own locks, so tables and columns must already exist.
    let schemaChanges: Bool
}

extension DataEngine {
    func context(_ identity: Identity, _ logger: Logger) -> WriteContext {
        WriteContext(session: session(logger), identity: identity, schemaChanges: true)
    }

    /// Creates one object and returns it; relation changes it carries (``RelationDeltas``) are
    /// applied in the same transaction.
    package func create(_ tableName: String, object: JSONObject, identity: Identity, logger: Logger) async throws
        -> String
    {
        guard RelationDeltas.carried(by: object) else {
            return try await create(tableName, object: object, context: context(identity, logger))
        }
        return try await saveChangingRelations(tableName, object: object, id: nil, identity: identity, logger: logger)
    }

    /// `PUT /data/{t}`: updates when the object carries an `objectId`, else creates.
    package func save(_ tableName: String, object: JSONObject, identity: Identity, logger: Logger) async throws
        -> String
    {
        guard case .string(let id)? = object["objectId"] else {
            return try await create(tableName, object: object, identity: identity, logger: logger)
        }
        return try await update(tableName, id: id, changes: object, identity: identity, logger: logger)
    }

    /// Updates the properties `changes` names on object `id` and returns the whole object;
    /// relation changes it carries (``RelationDeltas``) are applied in the same transaction.
    package func update(_ tableName: String, id: String, changes: JSONObject, identity: Identity, logger: Logger)
        async throws -> String
    {
        guard RelationDeltas.carried(by: changes) else {
            return try await update(tableName, id: id, changes: changes, context: context(identity, logger))
        }
        return try await saveChangingRelations(tableName, object: changes, id: id, identity: identity, logger: logger)
    }

    /// Creates or replaces-by-id (`objectId` optional) and returns the object.
    package func upsert(_ tableName: String, object: JSONObject, identity: Identity, logger: Logger) async throws
        -> String
    {
        try await upsert(tableName, object: object, context: context(identity, logger))
    }

    /// Deletes object `id`; returns the deletion time in epoch milliseconds.
    package func delete(_ tableName: String, id: String, identity: Identity, logger: Logger) async throws -> Int64 {
        try await delete(tableName, id: id, context: context(identity, logger))
    }

    /// Creates up to 100 objects in one statement; returns their ids in request order.
    package func createBulk(_ tableName: String, objects: [JSONObject], identity: Identity, logger: Logger)
        async throws -> [String]
    {
        try await insertBulk(tableName, objects: objects, upsert: false, context: context(identity, logger))
    }

    /// Creates or updates up to 100 objects by id; returns their ids in request order.
    package func upsertBulk(_ tableName: String, objects: [JSONObject], identity: Identity, logger: Logger)
        async throws -> [String]
    {
        try await insertBulk(tableName, objects: objects, upsert: true, context: context(identity, logger))
    }

    /// Applies `changes` to every object matching `condition`; returns how many changed.
    package func updateBulk(
        _ tableName: String, condition: Condition?, changes: JSONObject, identity: Identity, logger: Logger
    ) async throws -> Int {
        try await updateBulk(tableName, condition: condition, changes: changes, context: context(identity, logger))
    }

    /// Deletes every object matching `condition` that the caller may remove — or, with a
    /// limited `window`, only the window of them in the default find order — and returns how
    /// many were deleted.
    package func deleteBulk(
        _ tableName: String, condition: Condition?, window: DeletionWindow = .all, identity: Identity, logger: Logger
    ) async throws -> Int {
        try await deleteBulk(tableName, condition: condition, window: window, context: context(identity, logger))
    }

    // MARK: Implementations shared with units of work

    func create(_ tableName: String, object: JSONObject, context: WriteContext) async throws -> String {
        _ = try await permit(context.identity, .create, table: tableName)
        return try await insert(tableName, objects: [object], onConflict: .fail, change: .create, context: context)
            .rows[0]
    }

    /// Creates the object, or updates the existing one its `objectId` names where the caller
    /// may update that row; otherwise writes nothing and answers as ``update(_:id:changes:context:)``
    /// does for such a row (1023).
    func upsert(_ tableName: String, object: JSONObject, context: WriteContext) async throws -> String {
        let conflict = try await upsertConflict(tableName, context: context)
        return try await insert(tableName, objects: [object], onConflict: conflict, change: .upsert, context: context)
            .rows[0]
    }

    func insertBulk(_ tableName: String, objects: [JSONObject], upsert: Bool, context: WriteContext) async throws
        -> [String]
    {
        guard objects.count <= 100 else { throw DataError.bulkLimit(100) }
        guard !objects.isEmpty else { return [] }
        guard upsert else {
            _ = try await permit(context.identity, .create, table: tableName)
            return try await insert(
                tableName, objects: objects, onConflict: .fail, change: .bulkCreate, context: context
            ).ids
        }
        // One statement cannot both insert and update one row (PostgreSQL's 21000 was a 500).
        var named = Set<String>()
        for id in objects.compactMap({ $0["objectId"]?.string }) where !named.insert(id).inserted {
            throw DataError.invalidBody("A bulk upsert names objectId '\(id.prefix(64))' more than once")
        }
        let conflict = try await upsertConflict(tableName, context: context)
        return try await insert(
            tableName, objects: objects, onConflict: conflict, change: .bulkUpsert, context: context
        ).ids
    }

    /// An upsert needs Create and Update on the table, and updates only the existing rows its
    /// Update grant admits, as an update would.
    private func upsertConflict(_ tableName: String, context: WriteContext) async throws -> WriteStatements.Conflict {
        _ = try await permit(context.identity, .create, table: tableName)
        return .update(try await permit(context.identity, .update, table: tableName))
    }

    private func insert(
        _ tableName: String, objects: [JSONObject], onConflict conflict: WriteStatements.Conflict,
        change: WriteStatements.Change, context: WriteContext
    ) async throws -> (ids: [String], rows: [String]) {
        return try await withSchema(for: tableName, objects: objects, createTable: true, context: context) {
            catalog, table, context in
            var entries: [(id: String, object: PreparedObject)] = []
            for object in objects {
                var prepared = try ObjectReader.prepare(object, table: table, allowExpressions: false)
                if !conflict.isUpsert || prepared.objectId == nil {
                    try ObjectReader.applyDefaults(&prepared, table: table)
                }
                entries.append((prepared.objectId ?? Self.newObjectId(), prepared))
            }
            var sql = SQL()
            try WriteStatements.insert(
                entries, ownerId: context.identity.userId, table: table, schema: catalog.schemaName,
                onConflict: conflict,
                into: &sql)
            let ids = entries.map(\.id)
            // Bulk writes answer ids only: one count and one change event instead of rendering
            // and announcing every row.
            guard change != .bulkCreate && change != .bulkUpsert else {
                WriteStatements.selectCount(table: table, change: change, appID: catalog.appID, into: &sql)
                try await insertAll(
                    sql, count: entries.count, onConflict: conflict, table: table, session: context.session)
                return (ids, [])
            }
            WriteStatements.selectObjects(table: table, change: change, appID: catalog.appID, into: &sql)
            let rows = try await mappingErrors(table: table.name, logger: logger) {
                try await context.session.column(sql, as: String.self)
            }
            // An upsert its grant passed over wrote nothing: refused as an update of that row
            // would be, inside the write's transaction, so a column the write added goes too.
            if change == .upsert, rows.isEmpty {
                throw try await missing(
                    ids[0], table: tableName, appID: context.identity.appId, operation: .update,
                    session: context.session)
            }
            return (ids, rows)
        }
    }

    /// Runs a bulk insert of `count` objects. One that wrote fewer named an existing object the
    /// caller may not update: the whole request is refused as an update of it would be (1023)
    /// and nothing is written — where that can happen the statement runs in a transaction (a
    /// unit of work's own inside one) that the refusal rolls back.
    private func insertAll(
        _ sql: SQL, count: Int, onConflict conflict: WriteStatements.Conflict, table: TableSchema,
        session: DatabaseSession
    ) async throws {
        guard conflict.maySkipRows else {
            _ = try await mappingErrors(table: table.name, logger: logger) { try await session.rows(sql) }
            return
        }
        try await mappingErrors(table: table.name, logger: logger) {
            try await session.transaction { (session: DatabaseSession) async throws -> Void in
                let written = try await session.column(sql, as: Int64.self).first ?? 0
                guard written == Int64(count) else {
                    throw DataError.permissionDenied(DataOperation.update.rawValue, table: table.name)
                }
            }
        }
    }

    func update(_ tableName: String, id: String, changes: JSONObject, context: WriteContext) async throws -> String {
        let grant = try await permit(context.identity, .update, table: tableName)
        return try await withSchema(for: tableName, objects: [changes], createTable: false, context: context) {
            catalog, table, context in
            let prepared = try ObjectReader.prepare(changes, table: table, allowExpressions: true)
            var sql = SQL()
            try WriteStatements.update(prepared, table: table, schema: catalog.schemaName, into: &sql) { sql in
                WriteStatements.byId(id, grant: grant, into: &sql)
            }
            WriteStatements.selectObjects(table: table, change: .update, appID: catalog.appID, into: &sql)
            let rows = try await mappingErrors(table: table.name, logger: logger) {
                try await context.session.column(sql, as: String.self)
            }
            guard let row = rows.first else {
                throw try await missing(
                    id, table: tableName, appID: context.identity.appId, operation: .update, session: context.session)
            }
            return row
        }
    }

    func delete(_ tableName: String, id: String, context: WriteContext) async throws -> Int64 {
        let (catalog, table) = try await table(tableName, app: context.identity.appId)
        try table.requireWritable()
        let grant = try access.authorize(context.identity, .remove, table: tableName, catalog: catalog)
        var sql = SQL()
        try WriteStatements.delete(table: table, schema: catalog.schemaName, into: &sql) { sql in
            WriteStatements.byId(id, grant: grant, into: &sql)
        }
        WriteStatements.selectCount(
            table: table, change: .delete, appID: catalog.appID, cascade: cascade(catalog, context.identity), into: &sql
        )
        let rows = try await mappingErrors(table: table.name, logger: logger) {
            try await context.session.column(sql, as: Int64.self)
        }
        guard rows.first == 1 else {
            throw try await missing(
                id, table: tableName, appID: context.identity.appId, operation: .remove, session: context.session)
        }
        return Int64((Date().timeIntervalSince1970 * 1000).rounded())
    }

    func updateBulk(_ tableName: String, condition: Condition?, changes: JSONObject, context: WriteContext)
        async throws -> Int
    {
        let grant = try await permit(context.identity, .update, table: tableName)
        return try await withSchema(for: tableName, objects: [changes], createTable: false, context: context) {
            catalog, table, context in
            let prepared = try ObjectReader.prepare(changes, table: table, allowExpressions: true)
            var sql = SQL()
            let relations = RelationPaths(catalog: catalog, access: access, identity: context.identity)
            try WriteStatements.update(prepared, table: table, schema: catalog.schemaName, into: &sql) { sql in
                try Self.filter(condition, grant: grant, table: table, relations: relations, into: &sql)
            }
            WriteStatements.selectCount(
                table: table, change: .bulkUpdate, appID: catalog.appID, whereClause: condition?.text, into: &sql)
            let rows = try await mappingErrors(table: table.name, logger: logger) {
                try await context.session.column(sql, as: Int64.self)
            }
            return Int(rows.first ?? 0)
        }
    }

    func deleteBulk(
        _ tableName: String, condition: Condition?, window: DeletionWindow = .all, context: WriteContext
    ) async throws -> Int {
        let (catalog, table) = try await table(tableName, app: context.identity.appId)
        try table.requireWritable()
        let grant = try access.authorize(context.identity, .remove, table: tableName, catalog: catalog)
        var sql = SQL()
        let relations = RelationPaths(catalog: catalog, access: access, identity: context.identity)
        try WriteStatements.delete(table: table, schema: catalog.schemaName, into: &sql) { sql in
            guard !window.isAll else {
                try Self.filter(condition, grant: grant, table: table, relations: relations, into: &sql)
                return
            }
            try WriteStatements.window(window, table: table, schema: catalog.schemaName, grant: grant, into: &sql) {
                sql in
                try Self.filter(condition, grant: grant, table: table, relations: relations, into: &sql)
            }
        }
        WriteStatements.selectCount(
            table: table, change: .bulkDelete, appID: catalog.appID, whereClause: condition?.text,
            cascade: cascade(catalog, context.identity), into: &sql)
        let rows = try await mappingErrors(table: table.name, logger: logger) {
            try await context.session.column(sql, as: Int64.self)
        }
        return Int(rows.first ?? 0)
    }

    /// Where a delete's `_parent_id` children go too, when the app uses them: the tables with the
    /// column whose every row `identity` may remove (a row-dependent or denied Remove keeps them).
    private func cascade(_ catalog: AppCatalog, _ identity: Identity) -> ParentCascade? {
        guard ParentReference.isUsed(in: catalog) else { return nil }
        let tables = catalog.tables.values.filter { table in
            guard table.column(named: ParentReference.column) != nil,
                let grant = try? access.authorize(identity, .remove, table: table.name, catalog: catalog)
            else { return false }
            return grant.rowFilter == nil
        }
        return ParentCascade(schema: catalog.schemaName, tables: tables.map(\.name))
    }

    /// `<access filter> AND <condition>`, or TRUE; the condition may reach related tables through `relations`.
    static func filter(
        _ condition: Condition?, grant: AccessGrant, table: TableSchema, relations: RelationPaths? = nil,
        into sql: inout SQL
    ) throws {
        sql.append("(")
        if let rowFilter = grant.rowFilter {
            rowFilter(&sql, "t")
            sql.append(") AND (")
        }
        try ExpressionCompiler(table: table, relations: relations).condition(condition ?? .constant(true), into: &sql)
        sql.append(")")
    }

    /// The table for a write, created or extended first when dynamic schema allows (the change
    /// commits at once: for a write that must not leave a column behind, ``withSchema(for:objects:createTable:context:_:)``).
    func schema(for tableName: String, objects: [JSONObject], createTable: Bool, context: WriteContext)
        async throws -> (AppCatalog, TableSchema)
    {
        try await withSchema(for: tableName, objects: objects, createTable: createTable, context: context) {
            catalog, table, _ in
            (catalog, table)
        }
    }

    /// Runs `write` on the table as `objects` need it. When dynamic schema must first create the
    /// table or its columns, the change and `write` commit in one transaction, so a write that
    /// fails (a type error, a refusal, a constraint) leaves no table or column behind.
    func withSchema<Result: Sendable>(
        for tableName: String, objects: [JSONObject], createTable: Bool, context: WriteContext,
        _ write: (AppCatalog, TableSchema, WriteContext) async throws -> Result
    ) async throws -> Result {
        try ObjectReader.refuseReserved(objects, table: tableName)
        let appID = context.identity.appId
        let catalog = try await cache.catalog(for: appID)
        let existing = catalog.table(named: tableName)
        if existing == nil && !createTable { throw DataError.tableNotFound(tableName) }
        try existing?.requireWritable()
        try UsersTableGuard.refuseManagedProperties(
            objects, table: existing, named: tableName, identity: context.identity)
        let missing = try ObjectReader.missingColumns(objects, table: existing)
        try ColumnLimits.checkWrite(adding: missing.count, table: tableName)
        if let existing, missing.isEmpty { return try await write(catalog, existing, context) }
        if !context.schemaChanges, let existing, let first = missing.first {
            throw DataError.transactionColumnMissing(first.name, table: existing.name)
        }
        guard catalog.dynamicSchema, context.schemaChanges else {
            guard let existing else { throw DataError.tableNotFound(tableName) }
            throw DataError.dynamicSchemaDisabled(missing.map(\.name), table: existing.name)
        }
        guard Identifier.isValid(tableName) else { throw DataError.invalidName(tableName) }
        return try await editor(context.session.logger).change(appID: appID) { session, fresh in
            try await SchemaEditor.ensure(table: tableName, columns: missing, in: fresh, session: session)
        } then: { session, updated in
            guard let table = updated.table(named: tableName) else { throw DataError.tableNotFound(tableName) }
            let changing = WriteContext(
                session: session, identity: context.identity, schemaChanges: context.schemaChanges)
            return try await write(updated, table, changing)
        }
    }
}
