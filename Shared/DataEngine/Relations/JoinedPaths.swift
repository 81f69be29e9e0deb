import InternalProtocol
import Permissions
import QueryLanguage

/// Related tables joined into a find so that `props`, `sortBy`, `groupBy` and aggregates can name
/// their columns: `address.city`, `customer.address.name`, `Count(items)`, `Sum(items.price)`.
/// Each relation prefix is one `LEFT JOIN (link JOIN related rows ON … AND <Find filter>)`, so an
/// object without a related object still appears (with nulls) and hidden related objects never
/// contribute. A path through a 1:N relation multiplies rows, so it is allowed only inside an
/// aggregate; sorting, grouping and plain properties take 1:1 paths (1017 otherwise).
struct JoinedPaths {
    struct Join {
        /// The relation names from the queried table, lower-cased.
        let prefix: [String]
        let alias: String
        let table: TableSchema
        let relation: RelationSchema
        /// The alias of the row it starts from.
        let from: String
        /// The table of that row (the relation's parent).
        let fromTable: TableSchema
    }

    private(set) var joins: [Join] = []

    /// The join and column a path names, or nil for a path this find did not join.
    func target(_ path: PropertyPath) -> (alias: String, column: ColumnSchema)? {
        guard path.inverse == nil, path.segments.count > 1 else { return nil }
        let prefix = path.segments.dropLast().map { $0.lowercased() }
        guard let join = joins.first(where: { $0.prefix == prefix }), let name = path.segments.last,
            let column = join.table.column(named: name)
        else { return nil }
        return (join.alias, column)
    }

    /// `Count(items)` counts linked children: a relation named alone stands for its `objectId`.
    static func expand(_ value: ValueExpression, table: TableSchema) -> ValueExpression {
        value.mapping { item in
            guard case .function(let name, let arguments) = item, ExpressionCompiler.aggregates.contains(name),
                arguments.count == 1,
                case .property(let path) = arguments[0], let column = path.column, table.relation(named: column) != nil
            else { return item }
            return .function(name, [.property(PropertyPath([column, "objectId"]))])
        }
    }

    /// Joins every relation path of `plain` (props, sort and group items) and `aggregated`
    /// (aggregate arguments) from `table`.
    init(plain: [ValueExpression], aggregated: [ValueExpression], from table: TableSchema, relations: RelationPaths)
        throws
    {
        for value in plain {
            for path in Self.paths(in: value) {
                _ = try join(path, from: table, relations: relations, insideAggregate: false)
            }
        }
        // Rows multiplied by one 1:N join inflate every other aggregate: such a find aggregates over
        // that relation only.
        var manyPrefixes: Set<[String]> = []
        var ownAggregates = false
        for value in aggregated {
            let paths = Self.paths(in: value)
            if paths.isEmpty { ownAggregates = true }
            for path in paths {
                if let prefix = try join(path, from: table, relations: relations, insideAggregate: true) {
                    manyPrefixes.insert(prefix)
                }
            }
        }
        if !manyPrefixes.isEmpty, manyPrefixes.count > 1 || ownAggregates {
            throw DataError.notSupportedYet(
                "Aggregates over a 1:N relation beside aggregates over the table's own columns or another 1:N relation")
        }
    }

    /// Relation paths a value names; those inside aggregates go to `aggregated` by the caller.
    static func paths(in value: ValueExpression) -> [PropertyPath] {
        var found: [PropertyPath] = []
        _ = value.mapping { item in
            if case .property(let path) = item, path.column == nil { found.append(path) }
            return item
        }
        return found
    }

    /// Joins `path`'s relations; answers the path's prefix up to its first 1:N relation, if any.
    private mutating func join(
        _ path: PropertyPath, from table: TableSchema, relations: RelationPaths, insideAggregate: Bool
    )
        throws -> [String]?
    {
        guard path.inverse == nil else {
            throw DataError.notSupportedYet("Inverse relation paths outside where clauses ('\(path)')")
        }
        var current = table
        var from = "t"
        var prefix: [String] = []
        var manyPrefix: [String]?
        for name in path.segments.dropLast() {
            prefix.append(name.lowercased())
            guard let relation = current.relation(named: name) else {
                if current.column(named: name) != nil { throw DataError.notARelation(name, table: current.name) }
                throw DataError.columnNotFound(name, table: current.name)
            }
            if relation.isMany && !insideAggregate {
                throw DataError.invalidQuery(
                    "'\(path)' crosses the 1:N relation '\(relation.name)'; use it in an aggregate or a where clause")
            }
            if relation.isMany, manyPrefix == nil { manyPrefix = prefix }
            guard let related = relations.catalog.table(named: relation.relatedTable) else {
                throw DataError.tableNotFound(relation.relatedTable)
            }
            if let existing = joins.first(where: { $0.prefix == prefix }) {
                from = existing.alias
            } else {
                let alias = "j\(joins.count)"
                joins.append(
                    Join(
                        prefix: prefix, alias: alias, table: related, relation: relation, from: from, fromTable: current
                    ))
                from = alias
            }
            current = related
        }
        guard let name = path.segments.last, current.column(named: name) != nil else {
            throw DataError.columnNotFound(path.segments.last ?? "", table: current.name)
        }
        return manyPrefix
    }

    /// ` LEFT JOIN (<link> jNl JOIN <table> jN ON … AND <filter>) ON jNl."parent" = <from>."objectId"` per join.
    func write(into sql: inout SQL, relations: RelationPaths) throws {
        for join in joins {
            sql.append(" LEFT JOIN (")
            sql.table(relations.catalog.schemaName, join.relation.linkTable)
            sql.append(" \(join.alias)l JOIN ")
            sql.table(relations.catalog.schemaName, join.table.name)
            sql.append(" \(join.alias) ON \(join.alias).\"objectId\" = \(join.alias)l.\"child\" AND ")
            try relations.writeGrant(.find, on: join.table, rowAlias: join.alias, into: &sql)
            sql.append(") ON \(join.alias)l.\"parent\" = \(join.from).\"objectId\" AND ")
            // The parent's LoadRelations rule decides, as for loading the relation.
            try relations.writeGrant(.loadRelations, on: join.fromTable, rowAlias: join.from, into: &sql)
        }
    }
}
