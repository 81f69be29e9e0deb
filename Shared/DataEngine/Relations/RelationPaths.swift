import InternalProtocol
import Permissions
import QueryLanguage

/// Where clauses through relations: a condition on `address.city`, `items.price` (any depth) or
/// the inverse `Order[items].name` becomes an `EXISTS` over the link tables and related rows —
/// true when some related object satisfies it — with the caller's Find filter on every related
/// table, so a where clause never reveals objects the caller may not find. `path IS NULL` means no
/// related object has a value there (`NOT EXISTS … IS NOT NULL`). Each condition carries its own
/// `EXISTS`, so `items.price > 10 AND items.qty < 5` may be met by two different items.
struct RelationPaths {
    let catalog: AppCatalog
    let access: AccessControl
    let identity: Identity

    /// One step from a row to its related rows.
    struct Hop {
        let linkTable: String
        let table: TableSchema
        /// The link column that names the row the step starts from (`parent` forward, `child` inverse).
        let near: String
        /// The link column that names the related row.
        let far: String
    }

    /// The one relation path a leaf condition compares, or nil when it compares only columns;
    /// 1019 when it mixes a path with columns or with another path.
    static func path(in condition: Condition) throws -> PropertyPath? {
        switch condition {
        case .and, .or, .not, .constant: return nil
        default: break
        }
        var paths: Set<PropertyPath> = []
        var columns = 0
        _ = condition.mappingValues { value in
            if case .property(let path) = value { if path.column == nil { paths.insert(path) } else { columns += 1 } }
            return value
        }
        guard let path = paths.first else { return nil }
        // `distance(…, coordinates.latitude, coordinates.longitude)` names two columns of one related object.
        guard columns == 0, paths.allSatisfy({ $0.crossesSameRelations(as: path) }) else {
            throw DataError.notSupportedYet("Comparing a relation path with a column or another path")
        }
        return path
    }

    /// `(EXISTS (SELECT 1 FROM <links and related rows> WHERE <linked to the row> AND <filters> AND
    /// <condition on the last related table>))`.
    func exists(
        _ condition: Condition, path: PropertyPath, from table: TableSchema, rowAlias: String, into sql: inout SQL
    )
        throws
    {
        let (hops, _) = try resolve(path, from: table)
        var inner = condition.mappingValues { value in
            if case .property(let named) = value, named.column == nil, named.crossesSameRelations(as: path),
                let column = named.segments.last
            {
                return .property(PropertyPath([column]))
            }
            return value
        }
        var negated = false
        if case .nullCheck(let value, isNull: true) = inner {
            inner = .nullCheck(value, isNull: false)
            negated = true
        }
        sql.append(negated ? "(NOT EXISTS (SELECT 1 FROM " : "(EXISTS (SELECT 1 FROM ")
        for (index, hop) in hops.enumerated() {
            if index > 0 { sql.append(" JOIN ") }
            sql.table(catalog.schemaName, hop.linkTable)
            sql.append(" l\(index)")
            if index > 0 { sql.append(" ON l\(index).\"\(hop.near)\" = r\(index - 1).\"objectId\"") }
            sql.append(" JOIN ")
            sql.table(catalog.schemaName, hop.table.name)
            sql.append(" r\(index) ON r\(index).\"objectId\" = l\(index).\"\(hop.far)\"")
        }
        sql.append(" WHERE l0.\"\(hops[0].near)\" = \(rowAlias).\"objectId\"")
        var previous = (table: table, alias: rowAlias)
        for (index, hop) in hops.enumerated() {
            sql.append(" AND ")
            try writeGrant(.find, on: hop.table, rowAlias: "r\(index)", into: &sql)
            // Each hop reads a parent's relation: the parent's LoadRelations rule decides, as for loading it.
            let parent = hop.near == "parent" ? previous : (table: hop.table, alias: "r\(index)")
            sql.append(" AND ")
            try writeGrant(.loadRelations, on: parent.table, rowAlias: parent.alias, into: &sql)
            previous = (hop.table, "r\(index)")
        }
        sql.append(" AND ")
        let last = ExpressionCompiler(table: hops[hops.count - 1].table, rowAlias: "r\(hops.count - 1)")
        try last.condition(inner, into: &sql)
        sql.append("))")
    }

    /// The hops of `path` from `table` and the column it ends on.
    func resolve(_ path: PropertyPath, from table: TableSchema) throws -> (hops: [Hop], column: String) {
        var hops: [Hop] = []
        var current = table
        if let inverse = path.inverse {
            guard let parent = catalog.table(named: inverse.table) else { throw DataError.tableNotFound(inverse.table) }
            let relation = try relation(inverse.column, of: parent)
            guard relation.relatedTable.lowercased() == table.name.lowercased() else {
                throw DataError.invalidQuery(
                    "'\(inverse.table)[\(inverse.column)]' does not point at table '\(table.name)'")
            }
            hops.append(Hop(linkTable: relation.linkTable, table: parent, near: "child", far: "parent"))
            current = parent
        }
        for name in path.segments.dropLast() {
            let relation = try relation(name, of: current)
            guard let child = catalog.table(named: relation.relatedTable) else {
                throw DataError.tableNotFound(relation.relatedTable)
            }
            hops.append(Hop(linkTable: relation.linkTable, table: child, near: "parent", far: "child"))
            current = child
        }
        guard let column = path.segments.last, !hops.isEmpty else {
            throw DataError.invalidQuery("'\(path)' is not a relation path")
        }
        if current.relation(named: column) != nil {
            throw DataError.invalidQuery(
                "'\(path)' ends on a relation; compare one of its columns, such as '\(path).objectId'")
        }
        return (hops, column)
    }

    /// The caller's row filter for `operation` on `table`'s row `rowAlias`: `TRUE` when every row
    /// passes, `FALSE` when the rules deny every row.
    func writeGrant(_ operation: DataOperation, on table: TableSchema, rowAlias: String, into sql: inout SQL) throws {
        guard let grant = try access.grantUnlessDenied(identity, operation, table: table.name, catalog: catalog) else {
            return sql.append("FALSE")
        }
        guard let filter = grant.rowFilter else { return sql.append("TRUE") }
        filter(&sql, rowAlias)
    }

    private func relation(_ name: String, of table: TableSchema) throws -> RelationSchema {
        if let relation = table.relation(named: name) { return relation }
        if table.column(named: name) != nil { throw DataError.notARelation(name, table: table.name) }
        throw DataError.columnNotFound(name, table: table.name)
    }
}

extension PropertyPath {
    /// Whether both paths cross the same relations (ending, perhaps, on different columns).
    func crossesSameRelations(as other: PropertyPath) -> Bool {
        inverse?.table.lowercased() == other.inverse?.table.lowercased()
            && inverse?.column.lowercased() == other.inverse?.column.lowercased()
            && segments.dropLast().map { $0.lowercased() } == other.segments.dropLast().map { $0.lowercased() }
    }
}
