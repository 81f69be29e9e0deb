import InternalProtocol
import Logging
import Permissions

/// An allowed operation, optionally restricted to the rows a SQL predicate admits.
package struct AccessGrant: Sendable {
    /// Writes a boolean SQL expression over the row alias; nil admits every row.
    package let rowFilter: (@Sendable (inout SQL, _ rowAlias: String) -> Void)?

    /// Every row.
    package static let allRows = AccessGrant(rowFilter: nil)
}

/// The single authorization seam of the data engine: every read and write asks it first and
/// applies the returned row filter in SQL. Schema changes need the server-code key; everything
/// else follows the nine-layer model (``PermissionOracle``): finds, counts, updates and deletes
/// get the model compiled into their `WHERE` (``PermissionFilter``), creates and describes are
/// decided from the row-independent layers. `Users` rows are further narrowed to what the users
/// API allows (``UsersTableGuard``).
package struct AccessControl: Sendable {
    /// Creates the policy.
    package init() {}

    /// Allows a schema change on `table` for the server-code key, or throws 1023 / 403.
    package func authorize(_ identity: Identity, _ operation: DataOperation, table: String) throws
        -> AccessGrant
    {
        if operation == .schema && identity.keyKind != .serverCode {
            throw DataError.permissionDenied(operation.rawValue, table: table)
        }
        return .allRows
    }

    /// Allows `operation` on `table` under the app's permissions: a row filter for the
    /// operations on existing objects, else a decision (1023 / 403 when denied).
    package func authorize(_ identity: Identity, _ operation: DataOperation, table: String, catalog: AppCatalog) throws
        -> AccessGrant
    {
        if identity.isSystem { return .allRows }
        let caller = PermissionCaller(identity)
        // Users belong to users-service: its rules narrow (never widen) what the app's allow.
        let ownRow = try UsersTableGuard.rowGrant(identity, operation, table: table)
        let rules = UsersTableGuard.rules(catalog.permissions, for: identity, table: table)
        switch operation {
        case .schema:
            return try authorize(identity, operation, table: table)
        case .permission:
            // Changing who may act on an object changes the object: Permission takes Update on
            // it too. Otherwise a table whose Permission stays at the permissive default lets
            // anyone who knows an id open an owner-only object to himself (second probe, F12).
            let update = try authorize(identity, .update, table: table, catalog: catalog)
            return try rowGrant(caller, operation, table: table, rules: rules, appID: catalog.appID).and(ownRow).and(
                update)
        case .find, .update, .remove, .loadRelations, .addRelation, .deleteRelation:
            return try rowGrant(caller, operation, table: table, rules: rules, appID: catalog.appID).and(ownRow)
        case .create, .describe:
            guard
                PermissionOracle.allows(
                    caller, operation, container: table, ownerID: nil, acl: PermissionCells(), rules: rules)
            else { throw DataError.permissionDenied(operation.rawValue, table: table) }
            return .allRows
        }
    }

    /// The rules' row filter for `operation` on existing objects of `table` (1023 when they deny
    /// it for every row).
    private func rowGrant(
        _ caller: PermissionCaller, _ operation: DataOperation, table: String, rules: PermissionRules, appID: String
    ) throws -> AccessGrant {
        let plan = PermissionPlan(caller, operation, container: table, rules: rules)
        switch plan.constantDecision {
        case .grant: return .allRows
        case .deny: throw DataError.permissionDenied(operation.rawValue, table: table)
        case nil:
            let filter = PermissionFilter(plan: plan, operation: operation, appID: appID, table: table.lowercased())
            return AccessGrant { sql, alias in filter.write(into: &sql, rowAlias: alias) }
        }
    }
}

extension AccessControl {
    /// ``authorize(_:_:table:catalog:)`` for reading related objects: nil where the rules deny
    /// the operation for every row, since related objects are then invisible rather than an error.
    func grantUnlessDenied(_ identity: Identity, _ operation: DataOperation, table: String, catalog: AppCatalog) throws
        -> AccessGrant?
    {
        do {
            return try authorize(identity, operation, table: table, catalog: catalog)
        } catch let error as ErrorEnvelope where error.code == 1023 {  // permission denied
            return nil
        }
    }
}

extension DataEngine {
    /// The codes of a request that names a table or column the app's schema lacks.
    static let schemaMisses: Set<Int> = [1009, 1011]

    /// Runs `body` for `app`; when it fails for a table or column this process's catalog cache
    /// did not know, the cache is brought up to the committed schema (a change made through
    /// another service a moment ago may not be announced here yet) and `body` runs once more.
    /// Nothing is added to a request that succeeds; a genuine miss is refused again. Safe for
    /// writes: a miss is found before anything is written, or rolls back.
    package func retryingOnStaleSchema<Result>(
        app: String, logger: Logger, _ body: () async throws -> Result
    ) async throws -> Result {
        do {
            return try await body()
        } catch let miss as ErrorEnvelope where Self.schemaMisses.contains(miss.code) {
            // The schema the failed attempt used is unknown (an announcement may have arrived
            // since): compare with the cache as it is now, and try once more either way.
            _ = try await refreshIfStale(app, cached: try await cache.catalog(for: app).version, logger: logger)
            return try await body()
        }
    }

    /// Drops the cached catalog of `app` when the committed one is newer than `cached`;
    /// whether it was (one query).
    private func refreshIfStale(_ app: String, cached: Int64, logger: Logger) async throws -> Bool {
        let committed = try await CatalogStore.version(appID: app, session: session(logger))
        guard committed > cached else { return false }
        await cache.invalidate(app, below: committed)
        return true
    }

    /// Asks ``AccessControl`` under the app's current permissions (from the catalog cache). A
    /// refusal stands only against the committed rules: a grant made through another service a
    /// moment ago may not have reached this process's cache yet (one query, on refusals only).
    func permit(_ identity: Identity, _ operation: DataOperation, table: String) async throws -> AccessGrant {
        let catalog = try await cache.catalog(for: identity.appId)
        do {
            return try access.authorize(identity, operation, table: table, catalog: catalog)
        } catch let refusal as ErrorEnvelope where refusal.code == 1023 {
            guard try await refreshIfStale(identity.appId, cached: catalog.version, logger: logger) else {
                throw refusal
            }
            return try access.authorize(
                identity, operation, table: table, catalog: try await cache.catalog(for: identity.appId))
        }
    }
}

extension DataEngine {
    /// Why a single-object operation matched no row: 1023 (HTTP 403) when the object exists but
    /// the caller may not touch it, else 1000.
    func missing(
        _ id: String, table tableName: String, appID: String, operation: DataOperation, session: DatabaseSession
    )
        async throws -> ErrorEnvelope
    {
        let (catalog, table) = try await table(tableName, app: appID)
        var sql = SQL("SELECT count(*) FROM ")
        sql.table(catalog.schemaName, table.name)
        sql.append(" WHERE \"objectId\" = ")
        sql.bind(.text(id))
        let exists = try await session.column(sql, as: Int64.self).first ?? 0 > 0
        return exists ? DataError.permissionDenied(operation.rawValue, table: table.name) : DataError.entityNotFound(id)
    }
}
