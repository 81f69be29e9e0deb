/// Writes the select list that turns a row into its wire object: DATETIME as epoch
/// milliseconds, FILE_REF as the file's URL, `___class` bound as a literal; PostgreSQL's `row_to_json` renders the JSON.
enum Projection {
    /// Every column of `table` except `excluded` (matched ignoring case), then `___class`.
    static func columns(
        of table: TableSchema, excluding excluded: Set<String> = [], rowAlias: String, into sql: inout SQL
    ) {
        columnList(of: table, excluding: excluded, rowAlias: rowAlias, into: &sql)
        className(table, into: &sql)
    }

    /// Every column of `table` except `excluded`, each followed by `, `; answers the names written.
    @discardableResult static func columnList(
        of table: TableSchema, excluding excluded: Set<String>, rowAlias: String, into sql: inout SQL
    ) -> [String] {
        var written: [String] = []
        for column in table.columns where !excluded.contains(column.name.lowercased()) {
            wire(column, rowAlias: rowAlias, into: &sql)
            sql.append(" AS ")
            sql.identifier(column.name)
            sql.append(", ")
            written.append(column.name)
        }
        return written
    }

    /// The key of the table's name in each row.
    static let classKey = "___class"

    /// `$n::text AS "___class"`.
    static func className(_ table: TableSchema, into sql: inout SQL) {
        sql.bind(.text(table.name))
        sql.append(" AS ")
        sql.identifier(classKey)
    }

    /// The column's wire value (epoch milliseconds for DATETIME, a URL for FILE_REF).
    static func wire(_ column: ColumnSchema, rowAlias: String, into sql: inout SQL) {
        if column.type == .datetime {
            sql.append("(extract(epoch from \(rowAlias).")
            sql.identifier(column.name)
            sql.append(") * 1000)::bigint")
        } else if column.type == .fileReference {
            FileReference.wire(into: &sql) { sql in
                sql.append(rowAlias + ".")
                sql.identifier(column.name)
            }
        } else {
            sql.append(rowAlias + ".")
            sql.identifier(column.name)
        }
    }

    /// `SELECT row_to_json(r.*)::text FROM (` — close with ``close(into:)``.
    static func open(into sql: inout SQL) {
        sql.append("SELECT row_to_json(r.*)::text FROM (SELECT ")
    }

    /// `) r`.
    static func close(into sql: inout SQL) {
        sql.append(") r")
    }
}
