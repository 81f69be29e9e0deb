import PostgresNIO

/// Reads an app's catalog from the `data` schema.
enum CatalogStore {
    /// The app's settings, tables and columns as committed (or as seen inside `session`'s transaction).
    static func load(appID: String, session: DatabaseSession) async throws -> AppCatalog {
        var catalog = AppCatalog(appID: appID)
        var settings = SQL("SELECT dynamic_schema FROM data.settings WHERE app_id = ")
        settings.bind(.text(appID))
        catalog.dynamicSchema = try await session.column(settings, as: Bool.self).first ?? true
        var columns = SQL(
            """
            SELECT t.name, c.name, c.type, c.required, c.is_unique, c.indexed, c.default_value
            FROM data.tables t LEFT JOIN data.columns c ON c.app_id = t.app_id AND c.table_name = t.name
            WHERE t.app_id =
            """)
        columns.bind(.text(appID))
        columns.append(" ORDER BY t.name, c.position")
        for row in try await session.rows(columns) {
            let (table, name, type, required, unique, indexed, defaultText) = try row.decode(
                (String, String?, String?, Bool?, Bool?, Bool?, String?).self)
            var schema = catalog.tables[table.lowercased()] ?? TableSchema(name: table, columns: ColumnSchema.system)
            if let name, let type, let columnType = ColumnType(rawValue: type) {
                schema.columns.append(
                    ColumnSchema(
                        name: name, type: columnType, required: required ?? false, unique: unique ?? false,
                        indexed: indexed ?? false, defaultValue: defaultText.flatMap { try? JSONParser.parse($0) }))
            }
            catalog.tables[table.lowercased()] = schema
        }
        return catalog
    }
}
