import Permissions
import PostgresNIO

/// Reads an app's catalog from the `data` schema.
enum CatalogStore {
    /// The app's settings, tables and columns as committed (or as seen inside `session`'s transaction).
    static func load(appID: String, session: DatabaseSession) async throws -> AppCatalog {
        var catalog = AppCatalog(appID: appID)
        var settings = SQL("SELECT dynamic_schema, catalog_version FROM data.settings WHERE app_id = ")
        settings.bind(.text(appID))
        if let row = try await session.rows(settings).first {
            (catalog.dynamicSchema, catalog.version) = try row.decode((Bool, Int64).self)
        }
        var columns = SQL(
            """
            SELECT t.name, t.kind = 'geo', c.name, c.type, c.required, c.is_unique, c.indexed, c.default_value,
                   c.related_table, c.cardinality, c.auto_load, c.link_table
            FROM data.tables t LEFT JOIN data.columns c ON c.app_id = t.app_id AND c.table_name = t.name
            WHERE t.app_id =
            """)
        columns.bind(.text(appID))
        columns.append(" ORDER BY t.name, c.position")
        for row in try await session.rows(columns) {
            let (
                table, isGeoPoints, name, type, required, unique, indexed, defaultText, related, cardinality, autoLoad,
                link
            ) =
                try row.decode(
                    (String, Bool, String?, String?, Bool?, Bool?, Bool?, String?, String?, String?, Bool?, String?)
                        .self)
            var schema = catalog.tables[table.lowercased()] ?? TableSchema(name: table, columns: ColumnSchema.system)
            schema.isGeoPoints = isGeoPoints
            if let name, let related, let cardinality, let link {
                schema.relations.append(
                    RelationSchema(
                        name: name, relatedTable: related, isMany: cardinality == "n", autoLoad: autoLoad ?? false,
                        linkTable: link))
            } else if let name, let type, let columnType = ColumnType(rawValue: type) {
                schema.columns.append(
                    ColumnSchema(
                        name: name, type: columnType, required: required ?? false, unique: unique ?? false,
                        indexed: indexed ?? false, defaultValue: defaultText.flatMap { try? JSONParser.parse($0) }))
            }
            catalog.tables[table.lowercased()] = schema
        }
        catalog.permissions = try await loadPermissions(appID: appID, session: session)
        return catalog
    }

    /// The app's global and table permissions and owner policies.
    static func loadPermissions(appID: String, session: DatabaseSession) async throws -> PermissionRules {
        var rules = PermissionRules()
        var cells = SQL(
            "SELECT table_name, principal_kind, principal, operation, decision FROM data.permissions WHERE app_id = ")
        cells.bind(.text(appID))
        for row in try await session.rows(cells) {
            let (table, kind, name, operationText, decisionText) = try row.decode(
                (String, String, String, String, String).self)
            guard let operation = DataOperation(rawValue: operationText),
                let decision = PermissionDecision(rawValue: decisionText),
                let principal = Principal(kind: kind, name: name)
            else { continue }
            if table.isEmpty {
                rules.global.set(principal, operation, decision)
            } else {
                rules.containers[table, default: PermissionCells()].set(principal, operation, decision)
            }
        }
        var owners = SQL("SELECT table_name, operation, decision FROM data.owner_policies WHERE app_id = ")
        owners.bind(.text(appID))
        for row in try await session.rows(owners) {
            let (table, operationText, decisionText) = try row.decode((String, String, String).self)
            guard let operation = DataOperation(rawValue: operationText),
                let decision = PermissionDecision(rawValue: decisionText)
            else { continue }
            rules.owner[table, default: [:]][operation] = decision
        }
        var usage = SQL("SELECT table_name, operation FROM data.acl_usage WHERE app_id = ")
        usage.bind(.text(appID))
        for row in try await session.rows(usage) {
            let (table, operationText) = try row.decode((String, String).self)
            guard let operation = DataOperation(rawValue: operationText) else { continue }
            rules.aclOperations[table, default: []].insert(operation)
        }
        return rules
    }

    /// The app's committed catalog version (0 before its first change).
    static func version(appID: String, session: DatabaseSession) async throws -> Int64 {
        var query = SQL("SELECT catalog_version FROM data.settings WHERE app_id = ")
        query.bind(.text(appID))
        return try await session.column(query, as: Int64.self).first ?? 0
    }

    /// Bumps the app's catalog version inside a schema change's transaction and returns it.
    static func bumpVersion(appID: String, session: DatabaseSession) async throws -> Int64 {
        var bump = SQL("INSERT INTO data.settings (app_id, catalog_version) VALUES (")
        bump.bind(.text(appID))
        bump.append(
            ", 1) ON CONFLICT (app_id) DO UPDATE SET catalog_version = data.settings.catalog_version + 1"
                + " RETURNING catalog_version")
        return try await session.column(bump, as: Int64.self).first ?? 0
    }
}
