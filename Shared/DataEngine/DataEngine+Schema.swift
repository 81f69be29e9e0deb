import InternalProtocol
import Logging
import Permissions

/// Explicit schema management (server-code key only): tables, columns of any type with
/// required/unique/indexed/default, and the app's dynamic-schema switch.
extension DataEngine {
    /// Reads a column definition `{name, type, required?, unique?, indexed?, defaultValue?}`.
    package static func columnDefinition(_ object: JSONObject) throws -> ColumnSchema {
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

    /// Reads a relation column definition `{name, type: "DATA_REF", relatedTable, cardinality?,
    /// autoLoad?}`; cardinality is `1`/`n` (also `1:1`, `1:n`, `ONE_TO_ONE`, `ONE_TO_MANY`), 1:1
    /// when absent.
    package static func relationDefinition(_ object: JSONObject) throws -> RelationDefinition {
        guard let name = object["name"]?.string else { throw DataError.invalidBody("A column needs a string 'name'") }
        guard Identifier.isValid(name) else { throw DataError.invalidName(name) }
        guard let related = object["relatedTable"]?.string, !related.isEmpty else {
            throw DataError.invalidBody("Relation column '\(name)' needs a 'relatedTable'")
        }
        let cardinality = object["cardinality"]?.string ?? object["relationshipType"]?.string ?? "1"
        guard let isMany = RelationColumnArgument.isMany(cardinality) else {
            throw DataError.invalidBody("The cardinality of '\(name)' must be 1 or n")
        }
        return RelationDefinition(
            name: name, relatedTable: related, isMany: isMany, autoLoad: object["autoLoad"]?.boolValue ?? false)
    }

    /// Whether a column definition describes a relation column (its type is DATA_REF or RELATION).
    package static func isRelationDefinition(_ object: JSONObject) -> Bool {
        object["type"]?.string.flatMap(ColumnType.init(name:)) == .relation
    }

    /// Creates the table if needed and adds `columns` and `relations`, refusing ones that exist.
    package func addColumns(
        _ tableName: String, columns: [ColumnSchema], relations: [RelationDefinition] = [], identity: Identity,
        logger: Logger
    ) async throws -> JSONValue {
        _ = try access.authorize(identity, .schema, table: tableName)
        guard Identifier.isValid(tableName) else { throw DataError.invalidName(tableName) }
        // Names match ignoring case (as an existing column is found), so one request cannot name
        // a property twice — PostgreSQL's duplicate-column error was a 500.
        var named = Set<String>()
        for name in columns.map(\.name) + relations.map(\.name) where !named.insert(name.lowercased()).inserted {
            throw DataError.schemaConflict("The request names property '\(name)' more than once")
        }
        let catalog = try await mappingErrors(table: tableName, logger: logger) {
            try await editor(logger).change(appID: identity.appId) { session, fresh in
                for column in columns where fresh.table(named: tableName)?.hasProperty(named: column.name) == true {
                    throw DataError.schemaConflict("Column '\(column.name)' already exists in table '\(tableName)'")
                }
                try await SchemaEditor.ensure(table: tableName, columns: columns, in: fresh, session: session)
                guard !relations.isEmpty else { return }
                var current = try await CatalogStore.load(appID: fresh.appID, session: session)
                for relation in relations {
                    guard let table = current.table(named: tableName) else { throw DataError.tableNotFound(tableName) }
                    try await SchemaEditor.addRelation(relation, table: table, catalog: current, session: session)
                    current = try await CatalogStore.load(appID: fresh.appID, session: session)
                }
            }
        }
        guard let table = catalog.table(named: tableName) else { throw DataError.tableNotFound(tableName) }
        return Self.describe(table)
    }

    /// Changes one column: `name` (rename), `type`, `required`, `unique`, `indexed`, `defaultValue`.
    package func alterColumn(
        _ tableName: String, column name: String, changes: JSONObject, identity: Identity, logger: Logger
    ) async throws -> JSONValue {
        _ = try access.authorize(identity, .schema, table: tableName)
        let catalog = try await mappingErrors(table: tableName, logger: logger) {
            try await editor(logger).change(appID: identity.appId) { session, fresh in
                guard let table = fresh.table(named: tableName) else { throw DataError.tableNotFound(tableName) }
                try table.requireWritable()
                if let relation = table.relation(named: name) {
                    return try await RelationAlteration(
                        table: table, relation: relation, changes: changes, catalog: fresh, session: session
                    ).apply()
                }
                guard let column = table.column(named: name) else {
                    throw DataError.namedColumnNotFound(name, table: table.name)
                }
                guard !column.isSystem else {
                    throw DataError.schemaConflict("System column '\(column.name)' cannot change")
                }
                try await ColumnAlteration(
                    table: table, column: column, changes: changes, catalog: fresh, session: session
                ).apply()
            }
        }
        guard let table = catalog.table(named: tableName) else { throw DataError.tableNotFound(tableName) }
        let renamed = changes["name"]?.string ?? name
        if let relation = table.relation(named: renamed) { return Self.describe(relation) }
        guard let column = table.column(named: renamed) else {
            throw DataError.columnNotFound(renamed, table: table.name)
        }
        return Self.describe(column)
    }

    /// Drops one user column.
    package func dropColumn(_ tableName: String, column name: String, identity: Identity, logger: Logger) async throws {
        _ = try access.authorize(identity, .schema, table: tableName)
        _ = try await editor(logger).change(appID: identity.appId) { session, fresh in
            guard let table = fresh.table(named: tableName) else { throw DataError.tableNotFound(tableName) }
            try table.requireWritable()
            if let relation = table.relation(named: name) {
                return try await SchemaEditor.dropRelation(
                    relation, table: table.name, catalog: fresh, session: session)
            }
            guard let column = table.column(named: name) else {
                throw DataError.namedColumnNotFound(name, table: table.name)
            }
            guard !column.isSystem else {
                throw DataError.schemaConflict("System column '\(column.name)' cannot be dropped")
            }
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
    package func dropTable(_ tableName: String, identity: Identity, logger: Logger) async throws {
        _ = try access.authorize(identity, .schema, table: tableName)
        _ = try await editor(logger).change(appID: identity.appId) { session, fresh in
            guard let table = fresh.table(named: tableName) else { throw DataError.tableNotFound(tableName) }
            try table.requireWritable()
            try await SchemaEditor.dropRelations(touching: table, catalog: fresh, session: session)
            try await DeletedUsers.deleteAll(table: table.name, schema: fresh.schemaName, session: session)
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
    package func settings(identity: Identity) async throws -> JSONValue {
        _ = try access.authorize(identity, .schema, table: "*")
        let catalog = try await cache.catalog(for: identity.appId)
        return .object(JSONObject([("dynamicSchema", .bool(catalog.dynamicSchema))]))
    }

    /// Turns dynamic schema on or off for the app.
    package func setDynamicSchema(_ enabled: Bool, identity: Identity, logger: Logger) async throws -> JSONValue {
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
