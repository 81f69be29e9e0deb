import InternalProtocol
import QueryLanguage

/// Compiles a ``FindQuery`` on one table into a single parameterised statement: a page of
/// objects rendered as JSON, or a count.
struct FindStatement {
    let query: FindQuery
    let table: TableSchema
    let schema: String
    let grant: AccessGrant
    /// Only the children of one parent's relation, when set.
    var scope: LinkScope?
    /// How the where clause reaches related tables (and props, sorting and grouping join them).
    var relations: RelationPaths?
    /// The related tables joined for props, sorting, grouping and aggregates (set by ``prepared()``).
    private var joins: JoinedPaths?

    init(query: FindQuery, table: TableSchema, schema: String, grant: AccessGrant) {
        self.query = query
        self.table = table
        self.schema = schema
        self.grant = grant
    }

    private var compiler: ExpressionCompiler {
        ExpressionCompiler(table: table, allowsAggregates: true, aliases: aliases, joins: joins)
    }

    /// Select items and group items name columns, never aliases.
    private var columnCompiler: ExpressionCompiler {
        ExpressionCompiler(table: table, allowsAggregates: true, joins: joins)
    }

    /// The statement with the related tables its props, sort and group items name joined in.
    private func prepared() throws -> FindStatement {
        var values = (query.properties ?? []).map(\.expression) + query.sort.map(\.expression) + query.groupBy
        _ = query.having?.mappingValues { value in
            if ExpressionCompiler.isAggregate(value) { values.append(value) }
            return value
        }
        let expanded = values.map { JoinedPaths.expand($0, table: table) }
        guard expanded.contains(where: { !JoinedPaths.paths(in: $0).isEmpty }) else { return self }
        guard let relations else { throw DataError.notSupportedYet("Relation paths in queries") }
        var prepared = self
        prepared.joins = try JoinedPaths(
            plain: expanded.filter { !ExpressionCompiler.isAggregate($0) },
            aggregated: expanded.filter(ExpressionCompiler.isAggregate), from: table, relations: relations)
        return prepared
    }

    private var selectItems: [SelectItem]? {
        guard
            var items = query.properties?.map({
                SelectItem(expression: JoinedPaths.expand($0.expression, table: table), alias: $0.alias)
            })
        else { return nil }
        let excluded = Set(query.excluded.map { $0.lowercased() })
        items.removeAll { item in
            if case .property(let path) = item.expression, let name = path.column {
                return excluded.contains(name.lowercased())
            }
            return false
        }
        return items
    }

    private var aliases: [String: ValueExpression] {
        var aliases: [String: ValueExpression] = [:]
        for item in query.properties ?? [] {
            if let alias = item.alias { aliases[alias] = JoinedPaths.expand(item.expression, table: table) }
        }
        return aliases
    }

    private var aggregates: Bool {
        (query.properties ?? []).contains { ExpressionCompiler.isAggregate($0.expression) }
    }

    /// `SELECT row_to_json(r.*)::text FROM (SELECT … LIMIT … OFFSET …) r`.
    func page() throws -> SQL {
        try prepared().pageStatement()
    }

    private func pageStatement() throws -> SQL {
        var sql = SQL()
        Projection.open(into: &sql)
        if query.distinct { sql.append("DISTINCT ") }
        try projection(into: &sql)
        try body(into: &sql)
        try order(into: &sql)
        sql.append(" LIMIT ")
        sql.bind(.integer(Int64(query.pageSize)))
        sql.append(" OFFSET ")
        sql.bind(.integer(Int64(query.offset)))
        Projection.close(into: &sql)
        return sql
    }

    /// The number of objects (or groups, or distinct rows) the query matches, ignoring paging.
    func count() throws -> SQL {
        try prepared().countStatement()
    }

    private func countStatement() throws -> SQL {
        var sql = SQL("SELECT count(*)")
        if !query.groupBy.isEmpty || query.distinct {
            sql.append(" FROM (SELECT ")
            if query.distinct {
                sql.append("DISTINCT ")
                try projection(into: &sql, includeClass: false)
            } else {
                sql.append("1")
            }
            try body(into: &sql)
            sql.append(") g")
        } else {
            try from(into: &sql)
            try filter(into: &sql)
        }
        return sql
    }

    private func projection(into sql: inout SQL, includeClass: Bool = true) throws {
        var names = OutputNames()
        guard let items = selectItems, !query.allColumns else {
            let excluded = Set(query.excluded.map { $0.lowercased() })
            for name in excluded where !table.hasProperty(named: name) {
                throw DataError.columnNotFound(name, table: table.name)
            }
            for name in Projection.columnList(of: table, excluding: excluded, rowAlias: "t", into: &sql) {
                try names.claim(name)
            }
            // Beside `*`, items add what the columns lack: aliases, functions, related columns.
            for item in selectItems ?? [] where item.alias != nil || !isPlainColumn(item) {
                try names.claim(outputName(item))
                try selectItem(item, into: &sql)
                sql.append(", ")
            }
            try names.claim(Projection.classKey)
            Projection.className(table, into: &sql)
            return
        }
        var wroteAny = false
        if !aggregates, query.groupBy.isEmpty, !query.distinct, !items.contains(where: { isColumn($0, "objectId") }) {
            Projection.wire(ColumnSchema.system[0], rowAlias: "t", into: &sql)
            sql.append(" AS \"objectId\"")
            try names.claim("objectId")
            wroteAny = true
        }
        for item in items {
            if wroteAny { sql.append(", ") }
            try names.claim(outputName(item))
            try selectItem(item, into: &sql)
            wroteAny = true
        }
        if includeClass {
            if wroteAny { sql.append(", ") }
            try names.claim(Projection.classKey)
            Projection.className(table, into: &sql)
        }
    }

    /// The keys a row's JSON gets: each at most once, or the row would not be JSON a client can read.
    private struct OutputNames {
        private var used: Set<String> = []

        mutating func claim(_ name: String) throws {
            guard used.insert(name).inserted else {
                throw DataError.invalidQuery("'\(name)' would be answered twice; give one of the properties an alias")
            }
        }
    }

    private func outputName(_ item: SelectItem) -> String {
        item.alias ?? defaultName(item.expression)
    }

    private func selectItem(_ item: SelectItem, into sql: inout SQL) throws {
        if item.expression.literal != nil {
            throw DataError.invalidQuery("Properties must name columns, aggregates or expressions over them")
        }
        let type = try columnCompiler.staticType(item.expression)
        if type == .fileReference {
            try FileReference.wire(into: &sql) { sql in
                try columnCompiler.value(item.expression, context: nil, into: &sql)
            }
        } else {
            if type == .datetime { sql.append("(extract(epoch from ") }
            try columnCompiler.value(item.expression, context: nil, into: &sql)
            if type == .datetime { sql.append(") * 1000)::bigint") }
        }
        sql.append(" AS ")
        sql.identifier(outputName(item))
    }

    private func defaultName(_ expression: ValueExpression) -> String {
        switch expression {
        // A related column comes back under its own name (`groupBy=address.city` → `city`), as in Backendless.
        case .property(let path) where path.segments.count > 1:
            joins?.target(path)?.column.name ?? path.segments.last ?? "value"
        case .property(let path): table.column(named: path.description)?.name ?? path.description
        case .function(let name, _) where ScalarFunctions.all[name] != nil: ScalarFunctions.key(name)
        case .function(let name, _): name
        default: "value"
        }
    }

    /// Whether the item names one of the table's own columns, unaliased.
    private func isPlainColumn(_ item: SelectItem) -> Bool {
        if case .property(let path) = item.expression, let name = path.column {
            return table.column(named: name) != nil
        }
        return false
    }

    private func isColumn(_ item: SelectItem, _ name: String) -> Bool {
        if case .property(let path) = item.expression { return path.column == name }
        return false
    }

    /// `FROM … WHERE … [GROUP BY …] [HAVING …]`.
    private func body(into sql: inout SQL) throws {
        try from(into: &sql)
        try filter(into: &sql)
        if !query.groupBy.isEmpty {
            sql.append(" GROUP BY ")
            try sql.list(query.groupBy) { sql, item in try columnCompiler.value(item, context: nil, into: &sql) }
        }
        if let having = query.having {
            sql.append(" HAVING ")
            try havingCompiler.condition(having.mappingValues { JoinedPaths.expand($0, table: table) }, into: &sql)
        }
    }

    /// ` FROM <table> t`, joined to the link table when scoped to one parent's children.
    private func from(into sql: inout SQL) throws {
        sql.append(" FROM ")
        sql.table(schema, table.name)
        sql.append(" t")
        scope?.join(into: &sql)
        if let joins, let relations { try joins.write(into: &sql, relations: relations) }
    }

    /// Having references aliases by their aggregate, since SQL cannot name select aliases there.
    private var havingCompiler: HavingCompiler { HavingCompiler(base: columnCompiler, aliases: aliases) }

    private func filter(into sql: inout SQL) throws {
        var conditions: [(inout SQL) throws -> Void] = []
        if let rowFilter = grant.rowFilter { conditions.append { sql in rowFilter(&sql, "t") } }
        if let condition = query.condition {
            let plain = ExpressionCompiler(table: table, relations: relations)
            conditions.append { sql in try plain.condition(condition, into: &sql) }
        }
        guard !conditions.isEmpty else { return }
        sql.append(" WHERE ")
        for (offset, write) in conditions.enumerated() {
            if offset > 0 { sql.append(" AND ") }
            try write(&sql)
        }
    }

    private func order(into sql: inout SQL) throws {
        let grouped = !query.groupBy.isEmpty || aggregates
        if query.sort.isEmpty {
            if query.distinct || grouped {
                guard !query.groupBy.isEmpty || query.distinct else { return }
                sql.append(" ORDER BY 1")
                return
            }
            sql.append(scope == nil ? " ORDER BY t.\"created\", t.\"objectId\"" : " ORDER BY l.\"position\"")
            return
        }
        sql.append(" ORDER BY ")
        try sql.list(query.sort) { sql, item in
            try compiler.value(item.expression, context: nil, into: &sql)
            sql.append(item.descending ? " DESC" : " ASC")
        }
        if !grouped, !query.distinct { sql.append(", t.\"objectId\"") }
    }
}

/// Compiles having conditions with select aliases replaced by the values they name.
struct HavingCompiler {
    let base: ExpressionCompiler
    let aliases: [String: ValueExpression]

    func condition(_ condition: Condition, into sql: inout SQL) throws {
        try base.condition(substitute(condition), into: &sql)
    }

    private func substitute(_ condition: Condition) -> Condition {
        var result = condition
        for (alias, value) in aliases {
            result = result.replacingProperty(alias, with: value)
        }
        return result
    }
}
