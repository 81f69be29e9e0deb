import InternalProtocol

/// A change to a relation column inside a schema transaction: its name or its auto-load flag.
/// The link table keeps its name (the catalog records it), so a rename moves no data.
struct RelationAlteration {
    let table: TableSchema
    let relation: RelationSchema
    let changes: JSONObject
    let catalog: AppCatalog
    let session: DatabaseSession

    private static let changeable: Set<String> = ["name", "autoload", "type", "relatedtable", "cardinality"]

    func apply() async throws {
        if let key = changes.members.map(\.key).first(where: { !Self.changeable.contains($0.lowercased()) }) {
            throw DataError.schemaConflict(
                "Relation column '\(relation.name)' cannot change '\(key)'; only its name and autoLoad")
        }
        try requireUnchanged("type", ColumnType.relation.rawValue) { ColumnType(name: $0)?.rawValue }
        try requireUnchanged("relatedTable", relation.relatedTable.lowercased()) { $0.lowercased() }
        try requireUnchanged("cardinality", relation.isMany ? "n" : "1") { text in
            RelationColumnArgument.isMany(text).map { $0 ? "n" : "1" }
        }
        if let autoLoad = changes["autoLoad"]?.boolValue, autoLoad != relation.autoLoad {
            try await record("auto_load", .boolean(autoLoad))
        }
        if let newName = changes["name"]?.string, newName != relation.name {
            guard Identifier.isValid(newName) else { throw DataError.invalidName(newName) }
            guard !table.hasProperty(named: newName) || newName.lowercased() == relation.name.lowercased() else {
                throw DataError.schemaConflict("Column '\(newName)' already exists in table '\(table.name)'")
            }
            try await record("name", .text(newName))
        }
    }

    /// Refuses a change of what a relation is (its type, child table or cardinality).
    private func requireUnchanged(_ key: String, _ current: String, normalise: (String) -> String?) throws {
        guard let given = changes[key]?.string else { return }
        guard normalise(given) == current else {
            throw DataError.schemaConflict("The \(key) of relation column '\(relation.name)' cannot change")
        }
    }

    private func record(_ field: String, _ value: SQLValue) async throws {
        var sql = SQL("UPDATE data.columns SET \(field) = ")
        sql.bind(value)
        SchemaEditor.whereColumn(appID: catalog.appID, table: table.name, column: relation.name, into: &sql)
        _ = try await session.rows(sql)
    }
}
