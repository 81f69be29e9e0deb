import InternalProtocol
import Logging
import Permissions
import QueryLanguage

extension DataEngine {
    /// One page of objects matching `query`, each as JSON text.
    package func find(_ tableName: String, query: FindQuery, identity: Identity, logger: Logger) async throws
        -> [String]
    {
        try await find(tableName, query: query, identity: identity, session: session(logger))
    }

    /// ``find(_:query:identity:logger:)`` on `session` (a unit of work's transaction).
    func find(_ tableName: String, query: FindQuery, identity: Identity, session: DatabaseSession) async throws
        -> [String]
    {
        let (catalog, table) = try await table(tableName, app: identity.appId)
        let grant = try access.authorize(identity, .find, table: tableName, catalog: catalog)
        var find = FindStatement(query: query, table: table, schema: catalog.schemaName, grant: grant)
        find.relations = RelationPaths(catalog: catalog, access: access, identity: identity)
        let sql = try find.page()
        return try await mappingErrors(table: table.name, logger: logger) {
            let rows = try await session.column(sql, as: String.self)
            var loader = RelationLoader(
                catalog: catalog, identity: identity, access: access, session: session,
                pageSize: query.relationsPageSize)
            loader.rootConditions = Dictionary(query.relationConditions.map { ($0.key.lowercased(), $0.value) }) { $1 }
            return try await loader.attach(to: rows, table: table, query: query)
        }
    }

    /// The column `name` of table `tableName` in the caller's app (nil when there is none);
    /// 1009 when the table does not exist.
    package func column(_ name: String, of tableName: String, identity: Identity) async throws -> ColumnSchema? {
        try await table(tableName, app: identity.appId).1.column(named: name)
    }

    /// How many objects (groups, distinct rows) match `query`.
    package func count(_ tableName: String, query: FindQuery, identity: Identity, logger: Logger) async throws -> Int {
        let (catalog, table) = try await table(tableName, app: identity.appId)
        let grant = try access.authorize(identity, .find, table: tableName, catalog: catalog)
        var find = FindStatement(query: query, table: table, schema: catalog.schemaName, grant: grant)
        find.relations = RelationPaths(catalog: catalog, access: access, identity: identity)
        let sql = try find.count()
        return try await mappingErrors(table: table.name, logger: logger) {
            Int(try await session(logger).column(sql, as: Int64.self).first ?? 0)
        }
    }

    /// The object with `id` (`props`/`excludeProps` of `query` apply), or 1000.
    package func object(_ tableName: String, id: String, query: FindQuery, identity: Identity, logger: Logger)
        async throws -> String
    {
        let object = try await object(
            tableName, matching: [("objectId", id)], query: query, identity: identity, logger: logger)
        guard let object else {
            throw try await missing(
                id, table: tableName, appID: identity.appId, operation: .find, session: session(logger))
        }
        return object
    }

    /// The object whose columns equal `values` (the `pk` lookup), or nil.
    package func object(
        _ tableName: String, matching values: [(column: String, value: String)], query: FindQuery,
        identity: Identity, logger: Logger
    ) async throws -> String? {
        var single = query
        let conditions = values.map {
            Condition.comparison(.property(PropertyPath([$0.column])), .equal, .string($0.value))
        }
        single.condition = conditions.count == 1 ? conditions[0] : .and(conditions)
        single.pageSize = 1
        single.offset = 0
        single.sort = []
        return try await find(tableName, query: single, identity: identity, logger: logger).first
    }

    /// The first or last object by creation time, or nil for an empty table.
    package func edge(_ tableName: String, last: Bool, query: FindQuery, identity: Identity, logger: Logger)
        async throws -> String?
    {
        var edge = query
        let created = ValueExpression.property(PropertyPath(["created"]))
        edge.sort = [SortItem(expression: created, descending: last)]
        edge.pageSize = 1
        edge.offset = 0
        return try await find(tableName, query: edge, identity: identity, logger: logger).first
    }

    /// The table's columns in the contract's `properties` shape, relation columns last: a
    /// relation relations-service declared a moment ago is listed, since the request carries
    /// the catalog version its gateway saw that change make (``CatalogFreshness``).
    package func properties(_ tableName: String, identity: Identity) async throws -> JSONValue {
        _ = try await permit(identity, .describe, table: tableName)
        guard let table = try await cache.catalog(for: identity.appId).table(named: tableName) else {
            throw DataError.tableNotFound(tableName)
        }
        return Self.describe(table)
    }

    /// Every column of `table` and then every relation column, in the contract's shape.
    static func describe(_ table: TableSchema) -> JSONValue {
        .array(table.columns.map(describe) + table.relations.map(describe))
    }

    /// One column in the contract's `properties` shape: exactly Backendless's keys.
    package static func describe(_ column: ColumnSchema) -> JSONValue {
        property(
            name: column.name, required: column.required, type: column.type, defaultValue: column.defaultValue ?? .null,
            relatedTable: .null, autoLoad: .null, isPrimaryKey: column.name == "objectId")
    }

    /// One relation column in the contract's `properties` shape.
    package static func describe(_ relation: RelationSchema) -> JSONValue {
        property(
            name: relation.name, required: false, type: .relation, defaultValue: .null,
            relatedTable: .string(relation.relatedTable), autoLoad: .bool(relation.autoLoad), isPrimaryKey: false)
    }

    private static func property(
        name: String, required: Bool, type: ColumnType, defaultValue: JSONValue, relatedTable: JSONValue,
        autoLoad: JSONValue, isPrimaryKey: Bool
    ) -> JSONValue {
        .object(
            JSONObject([
                ("name", .string(name)), ("required", .bool(required)), ("type", .string(type.rawValue)),
                ("defaultValue", defaultValue), ("relatedTable", relatedTable), ("customRegex", .null),
                ("autoLoad", autoLoad), ("isPrimaryKey", .bool(isPrimaryKey)), ("expression", .null),
            ]))
    }
}
