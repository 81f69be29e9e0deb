import InternalProtocol

/// One column change inside a schema transaction: each requested attribute becomes its DDL
/// statement and its catalog update.
struct ColumnAlteration {
    let table: TableSchema
    let column: ColumnSchema
    let changes: JSONObject
    let catalog: AppCatalog
    let session: DatabaseSession

    func apply() async throws {
        if let typeName = changes["type"]?.string {
            guard let type = ColumnType(name: typeName) else {
                throw DataError.invalidBody("Unknown type '\(typeName)'")
            }
            if type != column.type { try await changeType(to: type) }
        }
        if let required = changes["required"]?.boolValue, required != column.required {
            try await alter(required ? " SET NOT NULL" : " DROP NOT NULL")
            try await record("required", .boolean(required))
        }
        if let unique = changes["unique"]?.boolValue, unique != column.unique {
            try await SchemaEditor.setIndex(
                .unique, on: unique, column: column.name, table: table.name, catalog: catalog, session: session)
            try await record("is_unique", .boolean(unique))
        }
        if let indexed = changes["indexed"]?.boolValue, indexed != column.indexed {
            try await SchemaEditor.setIndex(
                .plain, on: indexed, column: column.name, table: table.name, catalog: catalog, session: session)
            try await record("indexed", .boolean(indexed))
        }
        if let value = changes["defaultValue"] {
            let type = changes["type"]?.string.flatMap(ColumnType.init(name:)) ?? column.type
            guard value == .null || ValueEncoding.encode(value, as: type) != nil else {
                throw DataError.invalidBody("defaultValue is not a valid \(type.rawValue)")
            }
            try await record("default_value", value == .null ? .null("text") : .text(value.jsonText))
        }
        if let newName = changes["name"]?.string, newName != column.name {
            try await rename(to: newName)
        }
    }

    /// Converts stored values; DATETIME and JSON need explicit conversions.
    private func changeType(to type: ColumnType) async throws {
        guard type != .autoIncrement, column.type != .autoIncrement else {
            throw DataError.schemaConflict("AUTO_INCREMENT columns are created as such and cannot be converted")
        }
        let quoted = SQL.quoted(column.name)
        let using: String =
            switch (column.type, type) {
            case (.datetime, .int), (.datetime, .double): "(extract(epoch from \(quoted)) * 1000)::\(type.sqlType)"
            case (.int, .datetime), (.double, .datetime): "to_timestamp(\(quoted) / 1000.0)"
            case (_, .json): "to_jsonb(\(quoted))"
            case (.json, _): "(\(quoted) #>> '{}')::\(type.sqlType)"
            default: "\(quoted)::\(type.sqlType)"
            }
        try await alter(" TYPE \(type.sqlType) USING \(using)")
        try await record("type", .text(type.rawValue))
    }

    private func rename(to newName: String) async throws {
        guard Identifier.isValid(newName) else { throw DataError.invalidName(newName) }
        guard !table.hasProperty(named: newName) || newName.lowercased() == column.name.lowercased() else {
            throw DataError.schemaConflict("Column '\(newName)' already exists in table '\(table.name)'")
        }
        var sql = SQL("ALTER TABLE ")
        sql.table(catalog.schemaName, table.name)
        sql.append(" RENAME COLUMN ")
        sql.identifier(column.name)
        sql.append(" TO ")
        sql.identifier(newName)
        _ = try await session.rows(sql)
        // Index names derive from the column name; keep them findable after the rename. The
        // indexes present now are the ones this alteration left (it renames last).
        let unique = changes["unique"]?.boolValue ?? column.unique
        let indexed = changes["indexed"]?.boolValue ?? column.indexed
        for (kind, present) in [(SchemaEditor.IndexKind.unique, unique), (.plain, indexed)] where present {
            let oldName = SchemaEditor.indexName(kind, table: table.name, column: column.name)
            // Names hash the lower-cased column, so a change of case keeps the index's name.
            guard oldName != SchemaEditor.indexName(kind, table: table.name, column: newName) else { continue }
            var index = SQL("ALTER INDEX ")
            index.table(catalog.schemaName, oldName)
            index.append(" RENAME TO ")
            index.identifier(SchemaEditor.indexName(kind, table: table.name, column: newName))
            _ = try await session.rows(index)
        }
        try await record("name", .text(newName))
    }

    private func alter(_ trustedClause: String) async throws {
        var sql = SQL("ALTER TABLE ")
        sql.table(catalog.schemaName, table.name)
        sql.append(" ALTER COLUMN ")
        sql.identifier(column.name)
        sql.append(trustedClause)
        _ = try await session.rows(sql)
    }

    /// Updates one catalog field; `field` is one of this type's own constants.
    private func record(_ field: String, _ value: SQLValue) async throws {
        var sql = SQL("UPDATE data.columns SET \(field) = ")
        sql.bind(value)
        SchemaEditor.whereColumn(appID: catalog.appID, table: table.name, column: column.name, into: &sql)
        _ = try await session.rows(sql)
    }
}
