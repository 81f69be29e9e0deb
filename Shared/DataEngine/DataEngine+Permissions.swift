import InternalProtocol
import Logging
import Permissions
import PostgresNIO

/// One permission change: GRANT, DENY, or (nil) INHERIT — clearing the cell.
package struct PermissionChange: Sendable {
    package var decision: PermissionDecision?
    package var operation: DataOperation
    package var principal: Principal

    /// Creates a change.
    package init(decision: PermissionDecision?, operation: DataOperation, principal: Principal) {
        self.decision = decision
        self.operation = operation
        self.principal = principal
    }
}

extension DataEngine {
    /// `PUT /data/{table}/permissions/{GRANT|DENY|INHERIT}/{objectId}`: one cell of the object's
    /// ACL. The caller needs the Permission right on the object (1023 / 403; 1000 for an
    /// unknown object).
    package func setObjectPermission(
        _ change: PermissionChange, table tableName: String, objectID: String, identity: Identity, logger: Logger
    ) async throws {
        let session = session(logger)
        let table = try await requirePermissionRight(
            table: tableName, objectID: objectID, identity: identity, session: session)
        _ = try await session.rows(Self.aclCell(change, table: table, objectID: objectID, appID: identity.appId))
        try await catchUp(afterACLCells: [change], table: table, appID: identity.appId, session: session)
    }

    /// Replaces the object's ACL cells for `operations` with `cells` inside a transaction (a
    /// QuickBlox record's permissions, written with the record). The caller needs the Permission
    /// right on the object; once the transaction commits, ``catchUp(afterACLCells:table:identity:logger:)``.
    func replaceObjectACL(
        _ cells: [PermissionChange], operations: Set<DataOperation>, table tableName: String, objectID: String,
        context: WriteContext
    ) async throws {
        let appID = context.identity.appId
        let table = try await requirePermissionRight(
            table: tableName, objectID: objectID, identity: context.identity, session: context.session)
        var clear = SQL("DELETE FROM data.object_acl WHERE app_id = ")
        clear.bind(.text(appID))
        clear.append(" AND table_name = ")
        clear.bind(.text(table.name.lowercased()))
        clear.append(" AND object_id = ")
        clear.bind(.text(objectID))
        clear.append(" AND operation = ANY(")
        clear.bind(.textArray(operations.map(\.rawValue).sorted()))
        clear.append(")")
        _ = try await context.session.rows(clear)
        for cell in cells {
            _ = try await context.session.rows(Self.aclCell(cell, table: table, objectID: objectID, appID: appID))
        }
    }

    /// After ACL cells were written: when one names an operation no object of the table had
    /// cells for, a trigger bumped the catalog version, and this instance's next request must not
    /// wait for the announcement to ask the ACL.
    package func catchUp(
        afterACLCells cells: [PermissionChange], table tableName: String, identity: Identity, logger: Logger
    ) async throws {
        let (_, table) = try await table(tableName, app: identity.appId)
        try await catchUp(afterACLCells: cells, table: table, appID: identity.appId, session: session(logger))
    }

    private func catchUp(
        afterACLCells cells: [PermissionChange], table: TableSchema, appID: String, session: DatabaseSession
    ) async throws {
        let catalog = try await cache.catalog(for: appID)
        let known = catalog.permissions.aclOperations[table.name.lowercased()] ?? []
        guard cells.contains(where: { $0.decision != nil && !known.contains($0.operation) }) else { return }
        var version = SQL("SELECT catalog_version FROM data.settings WHERE app_id = ")
        version.bind(.text(appID))
        await cache.invalidate(appID, below: try await session.column(version, as: Int64.self).first ?? 0)
    }

    private static func aclCell(_ change: PermissionChange, table: TableSchema, objectID: String, appID: String)
        -> SQL
    {
        let (kind, name) = change.principal.parts
        return cellStatement(
            "data.object_acl",
            key: [
                ("app_id", appID), ("table_name", table.name.lowercased()), ("object_id", objectID),
                ("operation", change.operation.rawValue), ("principal_kind", kind), ("principal", name),
            ], decision: change.decision)
    }

    /// Table-level permissions (a table name) or the global matrix (nil; roles only): one cell,
    /// with the server-code key (1023 otherwise). Every instance's cache learns of it.
    package func setRulePermission(
        _ change: PermissionChange, table tableName: String?, identity: Identity, logger: Logger
    )
        async throws
    {
        _ = try access.authorize(identity, .schema, table: tableName ?? "*")
        if tableName == nil, case .user = change.principal {
            throw DataError.invalidBody("Global permissions name roles, not users")
        }
        let key = try await ruleKey(tableName, appID: identity.appId)
        let (kind, name) = change.principal.parts
        _ = try await mappingErrors(table: tableName ?? "*", logger: logger) {
            try await editor(logger).change(appID: identity.appId) { session, _ in
                let sql = Self.cellStatement(
                    "data.permissions",
                    key: [
                        ("app_id", identity.appId), ("table_name", key), ("principal_kind", kind), ("principal", name),
                        ("operation", change.operation.rawValue),
                    ], decision: change.decision)
                _ = try await session.rows(sql)
            }
        }
    }

    /// The table's owner policy for one operation (server-code key).
    package func setOwnerPolicy(
        _ decision: PermissionDecision?, operation: DataOperation, table tableName: String, identity: Identity,
        logger: Logger
    ) async throws {
        _ = try access.authorize(identity, .schema, table: tableName)
        let key = try await table(tableName, app: identity.appId).1.name.lowercased()
        _ = try await editor(logger).change(appID: identity.appId) { session, _ in
            let sql = Self.cellStatement(
                "data.owner_policies",
                key: [("app_id", identity.appId), ("table_name", key), ("operation", operation.rawValue)],
                decision: decision)
            _ = try await session.rows(sql)
        }
    }
}

extension DataEngine {
    /// Where a table's rules are stored: its lower-cased name ('' for the global matrix); 1009
    /// for an unknown table.
    private func ruleKey(_ tableName: String?, appID: String) async throws -> String {
        guard let tableName else { return "" }
        return try await table(tableName, app: appID).1.name.lowercased()
    }
}

extension DataEngine {
    /// Sets (`decision`) or clears (nil: INHERIT) one permission cell: the row of the store
    /// `table` whose key columns (the primary key; names from code, values bound) hold `key`.
    static func cellStatement(_ table: String, key: [(column: String, value: String)], decision: PermissionDecision?)
        -> SQL
    {
        let columns = key.map(\.column).joined(separator: ", ")
        var sql = SQL()
        guard let decision else {
            sql.append("DELETE FROM \(table) WHERE ")
            for (index, cell) in key.enumerated() {
                sql.append(index == 0 ? "\(cell.column) = " : " AND \(cell.column) = ")
                sql.bind(.text(cell.value))
            }
            return sql
        }
        sql.append("INSERT INTO \(table) (\(columns), decision) VALUES (")
        sql.bind(all: key.map { .text($0.value) } + [.text(decision.rawValue)])
        sql.append(") ON CONFLICT (\(columns)) DO UPDATE SET decision = excluded.decision")
        return sql
    }
}

extension DataEngine {
    /// The table's permission cells and owner policy (`*`: the global matrix), with the
    /// server-code key: `{"permissions": [{"user"|"role", "permission", "access"}], "owner": [...]}`.
    package func rulePermissions(table tableName: String?, identity: Identity) async throws -> JSONValue {
        _ = try access.authorize(identity, .schema, table: tableName ?? "*")
        let key = try await ruleKey(tableName, appID: identity.appId)
        let catalog = try await cache.catalog(for: identity.appId)
        let cells = key.isEmpty ? catalog.permissions.global : catalog.permissions.containers[key] ?? PermissionCells()
        var owner: [JSONValue] = []
        for (operation, decision) in (catalog.permissions.owner[key] ?? [:]).sorted(by: {
            $0.key.rawValue < $1.key.rawValue
        }) {
            owner.append(Self.cellJSON(nil, operation, decision))
        }
        return .object(
            JSONObject([
                ("permissions", .array(cells.all.map { Self.cellJSON($0.principal, $0.operation, $0.decision) })),
                ("owner", .array(owner)),
            ]))
    }

    /// The object's ACL cells; needs the Permission right on the object (as changing them does).
    package func objectPermissions(table tableName: String, objectID: String, identity: Identity, logger: Logger)
        async throws -> JSONValue
    {
        let table = try await requirePermissionRight(
            table: tableName, objectID: objectID, identity: identity, session: session(logger))
        var sql = SQL("SELECT principal_kind, principal, operation, decision FROM data.object_acl WHERE app_id = ")
        sql.bind(.text(identity.appId))
        sql.append(" AND table_name = ")
        sql.bind(.text(table.name.lowercased()))
        sql.append(" AND object_id = ")
        sql.bind(.text(objectID))
        sql.append(" ORDER BY operation, principal_kind, principal")
        var cells: [JSONValue] = []
        for row in try await session(logger).rows(sql) {
            let (kind, name, operationText, decisionText) = try row.decode((String, String, String, String).self)
            guard let operation = DataOperation(rawValue: operationText),
                let decision = PermissionDecision(rawValue: decisionText),
                let principal = Principal(kind: kind, name: name)
            else { continue }
            cells.append(Self.cellJSON(principal, operation, decision))
        }
        return .array(cells)
    }

    /// The object's ACL cells and its owner (nil: none), with the Permission right on the object.
    package func objectACL(table tableName: String, objectID: String, identity: Identity, logger: Logger)
        async throws -> (cells: [JSONValue], owner: String?)
    {
        let cells = try await objectPermissions(
            table: tableName, objectID: objectID, identity: identity, logger: logger)
        let (catalog, table) = try await table(tableName, app: identity.appId)
        guard table.column(named: "ownerId") != nil else { return (cells.array ?? [], nil) }
        var sql = SQL("SELECT t.\"ownerId\" FROM ")
        sql.table(catalog.schemaName, table.name)
        sql.append(" AS t WHERE t.\"objectId\" = ")
        sql.bind(.text(objectID))
        let owner = try await session(logger).column(sql, as: String?.self).first ?? nil
        return (cells.array ?? [], owner)
    }

    /// 1023 / 1000 unless the caller has the Permission right on the object; its table.
    func requirePermissionRight(
        table tableName: String, objectID: String, identity: Identity, session: DatabaseSession
    ) async throws -> TableSchema {
        let grant = try await permit(identity, .permission, table: tableName)
        let (catalog, table) = try await table(tableName, app: identity.appId)
        var check = SQL("SELECT count(*) FROM ")
        check.table(catalog.schemaName, table.name)
        check.append(" AS t WHERE ")
        WriteStatements.byId(objectID, grant: grant, into: &check)
        guard try await session.column(check, as: Int64.self).first == 1 else {
            throw try await missing(
                objectID, table: tableName, appID: identity.appId, operation: .permission, session: session)
        }
        return table
    }

    static func cellJSON(_ principal: Principal?, _ operation: DataOperation, _ decision: PermissionDecision)
        -> JSONValue
    {
        var members: [(key: String, value: JSONValue)] = []
        if let parts = principal?.parts { members.append((parts.0, .string(parts.1))) }
        members += [("permission", .string(operation.permissionName)), ("access", .string(decision.rawValue))]
        return .object(JSONObject(members))
    }
}
