/// How many columns one write may add by dynamic schema, and how many a table may hold.
/// PostgreSQL refuses a table's 1,601st column, dropped ones included, and then every later
/// write that would add one; these limits stop well before it, ahead of any schema change.
enum ColumnLimits {
    /// New columns one save, update or bulk request may create.
    static let newPerWrite = 100
    /// Columns a table may hold, its four system columns and relation columns included.
    static let perTable = 1_000
    /// Relation columns a table may hold: each is a link table, and loading every relation of
    /// a table (`loadRelations=*`) takes a statement per relation (second probe, F4).
    static let relationsPerTable = 100

    /// 1031 unless a write that creates `adding` columns stays within ``newPerWrite``.
    static func checkWrite(adding count: Int, table: String) throws {
        guard count <= newPerWrite else {
            throw DataError.columnLimit(
                "A write may add at most \(newPerWrite) new columns to table '\(table)'; it names \(count)")
        }
    }

    /// 1031 unless `table`, holding `existing` columns, has room for `count` more.
    static func checkTable(_ table: String, existing: Int, adding count: Int) throws {
        guard existing + count <= perTable else {
            throw DataError.columnLimit(
                "Table '\(table)' may have at most \(perTable) columns; it has \(existing) and \(count) more were asked for"
            )
        }
    }

    /// 1031 unless `table` has room for one more relation column.
    static func checkRelation(_ table: TableSchema) throws {
        guard table.relations.count < relationsPerTable else {
            throw DataError.columnLimit("Table '\(table.name)' may have at most \(relationsPerTable) relation columns")
        }
        try checkTable(table.name, existing: table.propertyCount, adding: 1)
    }
}
