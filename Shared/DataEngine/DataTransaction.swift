import InternalProtocol
import Logging
import Permissions
import QueryLanguage

/// Data writes inside a caller's transaction, for services that must change app rows and their
/// own tables atomically (users-service registers a `Users` row and its credentials together).
/// The same rules, typing and change events apply as for the public API; tables and columns must
/// exist beforehand (``DataEngine/ensure(table:columns:appID:logger:)``).
package struct DataTransaction: Sendable {
    let engine: DataEngine
    let context: WriteContext

    /// The transaction's session, for the caller's own statements.
    package var session: DatabaseSession { context.session }

    /// Creates one object and returns it as JSON text.
    package func create(_ table: String, object: JSONObject) async throws -> String {
        try await engine.create(table, object: object, context: context)
    }

    /// Updates object `id` and returns it as JSON text.
    package func update(_ table: String, id: String, changes: JSONObject) async throws -> String {
        try await engine.update(table, id: id, changes: changes, context: context)
    }

    /// Object `id` as the caller may find it, or 1000.
    package func object(_ table: String, id: String) async throws -> String {
        var query = FindQuery()
        query.condition = .comparison(.property(PropertyPath(["objectId"])), .equal, .string(id))
        query.pageSize = 1
        let rows = try await engine.find(table, query: query, identity: context.identity, session: context.session)
        guard let row = rows.first else { throw DataError.entityNotFound(id) }
        return row
    }

    /// Replaces object `id`'s ACL cells for `operations` with `cells`; needs the Permission right
    /// on the object. Once the transaction commits, call ``DataEngine/catchUp(afterACLCells:table:identity:logger:)``.
    package func replaceObjectACL(
        _ table: String, id: String, operations: Set<DataOperation>, cells: [PermissionChange]
    ) async throws {
        try await engine.replaceObjectACL(cells, operations: operations, table: table, objectID: id, context: context)
    }

    /// Updates every object matching `condition`; how many changed.
    package func updateAll(_ table: String, matching condition: Condition?, changes: JSONObject) async throws -> Int {
        try await engine.updateBulk(table, condition: condition, changes: changes, context: context)
    }
}

extension DataEngine {
    /// Runs `body` in one transaction acting as `identity`; commits when it returns.
    package func transaction<Result: Sendable>(
        identity: Identity, logger: Logger, _ body: (DataTransaction) async throws -> Result
    ) async throws -> Result {
        try await session(logger).transaction { session in
            try await body(
                DataTransaction(
                    engine: self, context: WriteContext(session: session, identity: identity, schemaChanges: false)))
        }
    }

    /// Creates `table` and adds the `columns` it lacks, whatever the app's dynamic-schema switch
    /// says (a service's own tables, such as `Users`). Columns that exist are left as they are.
    package func ensure(table: String, columns: [ColumnSchema], appID: String, logger: Logger) async throws {
        let existing = try await cache.catalog(for: appID).table(named: table)
        if let existing, columns.allSatisfy({ existing.column(named: $0.name) != nil }) { return }
        _ = try await mappingErrors(table: table, logger: logger) {
            try await editor(logger).change(appID: appID) { session, fresh in
                try await SchemaEditor.ensure(table: table, columns: columns, in: fresh, session: session)
            }
        }
    }

    /// Creates the table (with `createTable`) and the columns `objects` need when dynamic schema
    /// allows, committing at once, so a transaction may then write them; 1009 / 1011-style
    /// refusals as a write's. The change commits before the write it serves, so the caller's
    /// right to `operation` on the table comes first (1023 when no row could allow it); a
    /// row-dependent right is the caller's to check on the rows it will write.
    package func prepareSchema(
        _ table: String, for objects: [JSONObject], createTable: Bool, operation: DataOperation, identity: Identity,
        logger: Logger
    ) async throws {
        _ = try await permit(identity, operation, table: table)
        _ = try await schema(for: table, objects: objects, createTable: createTable, context: context(identity, logger))
    }

    /// The table's schema, or nil when the app has no such table.
    package func tableSchema(_ table: String, appID: String) async throws -> TableSchema? {
        try await cache.catalog(for: appID).table(named: table)
    }
}

extension DataEngine {
    /// Adds the columns `objects` need to `table` (creating it) as a save would: only while the
    /// app's dynamic schema is on (else 1013).
    package func prepareSchema(_ table: String, objects: [JSONObject], identity: Identity, logger: Logger) async throws
    {
        _ = try await schema(for: table, objects: objects, createTable: true, context: context(identity, logger))
    }
}
