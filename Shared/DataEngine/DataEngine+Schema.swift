import InternalProtocol
import Logging
import Permissions

/// Explicit schema management (server-code key only): tables, columns of any type with
/// required/unique/indexed/default, and the app's dynamic-schema switch.
extension DataEngine {
    /// Reads a column definition `{name, type, required?, unique?, indexed?, defaultValue?}`.
    public static func columnDefinition(_ object: JSONObject) throws -> ColumnSchema {
        guard let name = object["name"]?.string else { throw DataError.invalidBody("A column needs a string 'name'") }
        guard Identifier.isValid(name) else { throw DataError.invalidName(name) }
        guard let typeName = object["type"]?.string, let type = ColumnType(name: typeName) else {
            let known = ColumnType.allCases.map(\.rawValue).joined(separator: ", ")
            throw DataError.invalidBody("Column '\(name)' needs a 'type', one of \(known)")
        }
        var column = ColumnSchema(name: name, type: type)
        column.required = object["required"]?.boolValue ?? false
        column.unique = object["unique"]?.boolValue ?? false
        column.indexed = object["indexed"]?.boolValue ?? false
        if let value = object["defaultValue"], value != .null {
            guard ValueEncoding.encode(value, as: type) != nil else {
                throw DataError.invalidBody("defaultValue of '\(name)' is not a valid \(type.rawValue)")
            }
            column.defaultValue = value
        }
        return column
    }

    /// Creates the table if needed and adds `columns`, refusing ones that exist.
    public func addColumns(_ tableName: String, columns: [ColumnSchema], identity: Identity, logger: Logger)
        async throws -> JSONValue
    {
        _ = try access.authorize(identity, .schema, table: tableName)
        guard Identifier.isValid(tableName) else { throw DataError.invalidName(tableName) }
        let catalog = try await mappingErrors(table: tableName, logger: logger) {
            try await editor(logger).change(appID: identity.appId) { session, fresh in
                for column in columns where fresh.table(named: tableName)?.column(named: column.name) != nil {
                    throw DataError.schemaConflict("Column '\(column.name)' already exists in table '\(tableName)'")
                }
                try await SchemaEditor.ensure(table: tableName, columns: columns, in: fresh, session: session)
            }
        }
        guard let table = catalog.table(named: tableName) else { throw DataError.tableNotFound(tableName) }
        return .array(table.columns.map(Self.describe))
    }

    /// Changes one column: `name` (rename), `type`, `required`, `unique`, `indexed`, `defaultValue`.
    public func alterColumn(
        _ tableName: String, column name: String, changes: JSONObject, identity: Identity, logger: Logger
    ) async throws -> JSONValue {
        _ = try access.authorize(identity, .schema, table: tableName)
        let catalog = try await mappingErrors(table: tableName, logger: logger) {
            try await editor(logger).change(appID: identity.appId) { session, fresh in
                guard let table = fresh.table(named: tableName) else { throw DataError.tableNotFound(tableName) }
                guard let column = table.column(named: name) else { throw DataError.columnNotFound(name, table: table.name) }
                guard !column.isSystem else { throw DataError.schemaConflict("System column '\(column.name)' cannot change") }
                try await ColumnAlteration(
                    table: table, column: column, changes: changes, catalog: fresh, session: session
                ).apply()
            }
        }
        guard let table = catalog.table(named: tableName) else { throw DataError.tableNotFound(tableName) }
        let renamed = changes["name"]?.string ?? name
        guard let column = table.column(named: renamed) else { throw DataError.columnNotFound(renamed, table: table.name) }
        return Self.describe(column)
    }

    /// Drops one user column.
    public func dropColumn(_ tableName: String, column name: String, identity: Identity, logger: Logger) async throws {
        _ = try access.authorize(identity, .schema, table: tableName)
        _ = try await editor(logger).change(appID: identity.appId) { session, fresh in
            guard let table = fresh.table(named: tableName) else { throw DataError.tableNotFound(tableName) }
            guard let column = table.column(named: name) else { throw DataError.columnNotFound(name, table: table.name) }
            guard !column.isSystem else { throw DataError.schemaConflict("System column '\(column.name)' cannot be dropped") }
            var drop = SQL("ALTER TABLE ")
            drop.table(fresh.schemaName, table.name)
            drop.append(" DROP COLUMN ")
            drop.identifier(column.name)
            _ = try await session.rows(drop)
            var record = SQL("DELETE FROM data.columns")
            SchemaEditor.whereColumn(appID: fresh.appID, table: table.name, column: column.name, into: &record)
            _ = try await session.rows(record)
        }
    }

    /// Drops a table and its rows.
    public func dropTable(_ tableName: String, identity: Identity, logger: Logger) async throws {
        _ = try access.authorize(identity, .schema, table: tableName)
        _ = try await editor(logger).change(appID: identity.appId) { session, fresh in
            guard let table = fresh.table(named: tableName) else { throw DataError.tableNotFound(tableName) }
            var drop = SQL("DROP TABLE ")
            drop.table(fresh.schemaName, table.name)
            _ = try await session.rows(drop)
            var record = SQL("DELETE FROM data.tables WHERE app_id = ")
            record.bind(.text(fresh.appID))
            record.append(" AND name = ")
            record.bind(.text(table.name))
            _ = try await session.rows(record)
        }
    }

    /// The app's data settings.
    public func settings(identity: Identity) async throws -> JSONValue {
        _ = try access.authorize(identity, .schema, table: "*")
        let catalog = try await cache.catalog(for: identity.appId)
        return .object(JSONObject([("dynamicSchema", .bool(catalog.dynamicSchema))]))
    }

    /// Turns dynamic schema on or off for the app.
    public func setDynamicSchema(_ enabled: Bool, identity: Identity, logger: Logger) async throws -> JSONValue {
        _ = try access.authorize(identity, .schema, table: "*")
        _ = try await editor(logger).change(appID: identity.appId) { session, fresh in
            var upsert = SQL("INSERT INTO data.settings (app_id, dynamic_schema) VALUES (")
            upsert.bind(.text(fresh.appID))
            upsert.append(", ")
            upsert.bind(.boolean(enabled))
            upsert.append(") ON CONFLICT (app_id) DO UPDATE SET dynamic_schema = excluded.dynamic_schema")
            _ = try await session.rows(upsert)
        }
        return try await settings(identity: identity)
    }
}
