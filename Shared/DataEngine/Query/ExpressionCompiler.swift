import InternalProtocol
import QueryLanguage

/// Compiles condition and value trees into SQL against one table's catalog entry: every
/// property is checked against the catalog and quoted, every literal bound with the type of
/// the column it meets, so nothing a client writes becomes SQL text.
struct ExpressionCompiler {
    /// The queried table.
    let table: TableSchema
    /// The SQL alias of the table's rows.
    var rowAlias = "t"
    /// Whether aggregate functions are allowed (select lists, having, sort).
    var allowsAggregates = false
    /// Select-list aliases usable in having and sort, with the value each names.
    var aliases: [String: ValueExpression] = [:]
    /// How where clauses reach related tables (`address.city`, `Order[items].name`); without it a
    /// relation path is 1019.
    var relations: RelationPaths?
    /// Related tables joined into the statement, for relation paths outside where clauses.
    var joins: JoinedPaths?

    /// The aggregate functions (lower-cased).
    static let aggregates: Set<String> = ["count", "sum", "avg", "min", "max"]

    /// Whether `value` is an aggregate function call.
    static func isAggregate(_ value: ValueExpression) -> Bool {
        if case .function(let name, _) = value { return aggregates.contains(name) }
        return false
    }

    // MARK: Conditions

    func condition(_ condition: Condition, into sql: inout SQL) throws {
        if let relations, let path = try RelationPaths.path(in: condition) {
            return try relations.exists(condition, path: path, from: table, rowAlias: rowAlias, into: &sql)
        }
        switch condition {
        case .and(let items): try junction(items, "AND", into: &sql)
        case .or(let items): try junction(items, "OR", into: &sql)
        case .not(let inner):
            sql.append("(NOT ")
            try self.condition(inner, into: &sql)
            sql.append(")")
        case .comparison(let left, let op, let right): try comparison(left, op, right, into: &sql)
        case .like(let value, let pattern, let negated): try like(value, pattern, negated, into: &sql)
        case .membership(let value, let items, let negated): try membership(value, items, negated, into: &sql)
        case .nullCheck(let value, let isNull):
            sql.append("(")
            _ = try self.value(value, context: nil, into: &sql)
            sql.append(isNull ? " IS NULL)" : " IS NOT NULL)")
        case .between(let value, let low, let high, let negated):
            let context = try staticType(value) ?? staticType(low) ?? staticType(high)
            try requireComparable(context, value)
            sql.append("(")
            _ = try self.value(value, context: context, into: &sql)
            sql.append(negated ? " NOT BETWEEN " : " BETWEEN ")
            _ = try self.value(low, context: context, into: &sql)
            sql.append(" AND ")
            _ = try self.value(high, context: context, into: &sql)
            sql.append(")")
        case .containsAll(let value, let items): try containsAll(value, items, into: &sql)
        case .constant(let truth): sql.append(truth ? "TRUE" : "FALSE")
        }
    }

    private func junction(_ items: [Condition], _ word: String, into sql: inout SQL) throws {
        try sql.junction(items, word) { sql, item in try condition(item, into: &sql) }
    }

    private func comparison(
        _ left: ValueExpression, _ op: ComparisonOperator, _ right: ValueExpression, into sql: inout SQL
    ) throws {
        let context = try staticType(left) ?? staticType(right)
        try requireComparable(context, left)
        if right == .null || left == .null {
            // `x = null` means IS NULL to SDK users, as in Backendless.
            let other = right == .null ? left : right
            guard op == .equal || op == .notEqual else {
                throw DataError.invalidQuery("Only = and != compare with null")
            }
            return try condition(.nullCheck(other, isNull: op == .equal), into: &sql)
        }
        sql.append("(")
        _ = try value(left, context: context, into: &sql)
        sql.append(" \(op == .notEqual ? "<>" : op.rawValue) ")
        _ = try value(right, context: context, into: &sql)
        sql.append(")")
    }

    private func like(_ value: ValueExpression, _ pattern: ValueExpression, _ negated: Bool, into sql: inout SQL)
        throws
    {
        let type = try staticType(value)
        guard type?.isTextual ?? true else {
            throw DataError.invalidQuery("LIKE applies to text properties, not to '\(describe(value))'")
        }
        sql.markPlanSensitive()
        sql.append("(")
        _ = try self.value(value, context: .string, into: &sql)
        sql.append(negated ? " NOT LIKE " : " LIKE ")
        _ = try self.value(pattern, context: .string, into: &sql)
        sql.append(")")
    }

    private func membership(
        _ value: ValueExpression, _ items: [ValueExpression], _ negated: Bool, into sql: inout SQL
    ) throws {
        let context = try staticType(value)
        try requireComparable(context, value)
        guard !items.isEmpty else { return sql.append(negated ? "TRUE" : "FALSE") }
        sql.append("(")
        _ = try self.value(value, context: context, into: &sql)
        sql.append(negated ? " NOT IN (" : " IN (")
        for (offset, item) in items.enumerated() {
            if offset > 0 { sql.append(", ") }
            _ = try self.value(item, context: context, into: &sql)
        }
        sql.append("))")
    }

    private func containsAll(_ value: ValueExpression, _ items: [ValueExpression], into sql: inout SQL)
        throws
    {
        guard try staticType(value) == .json else {
            throw DataError.invalidQuery("'all' applies to JSON array properties, not to '\(describe(value))'")
        }
        let elements = items.map { item -> JSONValue in
            guard case .string(let text) = item else { return item.literal ?? .null }
            if let integer = Int64(text) { return .integer(integer) }
            if let number = Double(text), number.isFinite { return .number(number) }
            return .string(text)
        }
        sql.append("(")
        _ = try self.value(value, context: .json, into: &sql)
        sql.append(" @> ")
        sql.bind(.json(JSONValue.array(elements).jsonText))
        sql.append(")")
    }

    func requireComparable(_ type: ColumnType?, _ value: ValueExpression) throws {
        if type == .json {
            throw DataError.invalidQuery(
                "JSON property '\(describe(value))' supports IS NULL and 'all' only in where clauses")
        }
    }

    // MARK: Values

    /// Writes `value` and returns its static type. `context` is the type a literal takes.
    @discardableResult
    func value(_ value: ValueExpression, context: ColumnType?, into sql: inout SQL) throws
        -> ColumnType?
    {
        switch value {
        case .property(let path): return try property(path, into: &sql)
        case .arithmetic(let op, let left, let right):
            let type = try staticType(value)
            sql.append("(")
            try self.value(left, context: type, into: &sql)
            sql.append(" \(op.rawValue) ")
            try self.value(right, context: type, into: &sql)
            sql.append(")")
            return type
        case .negated(let inner):
            // Checked before any SQL: PostgreSQL's own refusal would name its operators.
            _ = try staticType(value)
            sql.append("(-")
            let type = try self.value(inner, context: context, into: &sql)
            sql.append(")")
            return type
        case .function(let name, let arguments): return try function(name, arguments, into: &sql)
        case .list: throw DataError.invalidQuery("A list is only allowed after IN")
        default: return try literal(value, context: context, into: &sql)
        }
    }

    private func literal(_ value: ValueExpression, context: ColumnType?, into sql: inout SQL) throws
        -> ColumnType?
    {
        let (encoded, type) = try Self.encodedLiteral(value, context: context)
        sql.bind(encoded)
        return type
    }

    /// A literal as the value it binds and its type: `context` (the type it meets), else its own.
    static func encodedLiteral(_ value: ValueExpression, context: ColumnType?) throws -> (SQLValue, ColumnType) {
        guard let json = value.literal else { throw DataError.invalidQuery("Unsupported value") }
        let type = context ?? naturalType(json)
        if type.isTextual, case .integer(let integer) = json { return (.text(String(integer)), type) }
        guard let encoded = ValueEncoding.encode(json, as: type) else {
            if type == .datetime {
                throw DataError.invalidQuery("Invalid date format '\(json.string ?? json.jsonText)'")
            }
            throw DataError.invalidQuery("The value \(json.jsonText) is not a valid \(type.rawValue)")
        }
        return (encoded, type)
    }

    private static func naturalType(_ value: JSONValue) -> ColumnType {
        switch value {
        case .integer: .int
        case .number: .double
        case .bool: .boolean
        default: .string
        }
    }

    private func property(_ path: PropertyPath, into sql: inout SQL) throws -> ColumnType? {
        switch try resolve(path) {
        case .alias(let name, let aliased):
            sql.identifier(name)
            return try staticType(aliased)
        case .column(let column):
            sql.append(rowAlias + ".")
            sql.identifier(column.name)
            return Self.valueType(of: column)
        case .joined(let alias, let column):
            sql.append(alias + ".")
            sql.identifier(column.name)
            return Self.valueType(of: column)
        case .star:
            throw DataError.columnNotFound("*", table: table.name)
        }
    }

    /// What a property path names: a select alias, a column, a column of a joined related table, or `*`.
    private enum Resolution {
        case alias(String, ValueExpression)
        case column(ColumnSchema)
        case joined(alias: String, column: ColumnSchema)
        case star
    }

    private func resolve(_ path: PropertyPath) throws -> Resolution {
        guard let name = path.column else {
            if let target = joins?.target(path) { return .joined(alias: target.alias, column: target.column) }
            throw DataError.notSupportedYet("Relation paths in queries ('\(path)')")
        }
        if let aliased = aliases[name] { return .alias(name, aliased) }
        if name == "*" { return .star }
        guard let column = table.column(named: name) else { throw DataError.columnNotFound(name, table: table.name) }
        return .column(column)
    }

    /// The type a column's values have in expressions (identity columns are plain integers).
    private static func valueType(of column: ColumnSchema) -> ColumnType {
        column.type == .autoIncrement ? .int : column.type
    }

    private func function(_ name: String, _ arguments: [ValueExpression], into sql: inout SQL) throws
        -> ColumnType?
    {
        if GeoFunctions.contains(name) { return try geoFunction(name, arguments, into: &sql) }
        if let signature = ScalarFunctions.all[name] { return try scalar(name, signature, arguments, into: &sql) }
        guard Self.aggregates.contains(name) else { throw DataError.invalidQuery("Unknown function '\(name)'") }
        guard allowsAggregates else { throw DataError.invalidQuery("Aggregate \(name)() is not allowed here") }
        guard arguments.count == 1 else { throw DataError.invalidQuery("\(name)() takes one argument") }
        sql.append("\(name)(")
        if case .property(let path) = arguments[0], path.column == "*" {
            guard name == "count" else { throw DataError.invalidQuery("Only count() accepts *") }
            sql.append("*")
        } else {
            var inner = self
            inner.allowsAggregates = false
            try inner.value(arguments[0], context: nil, into: &sql)
        }
        sql.append(")")
        return try staticType(.function(name, arguments))
    }

    /// The type a value has without a context, or nil for untyped literals (strings, null).
    func staticType(_ value: ValueExpression) throws -> ColumnType? {
        switch value {
        case .property(let path):
            switch try resolve(path) {
            case .alias(_, let aliased): return try staticType(aliased)
            case .column(let column), .joined(_, let column): return Self.valueType(of: column)
            case .star: return nil
            }
        case .integer: return .int
        case .number: return .double
        case .boolean: return .boolean
        case .string, .null, .list: return nil
        case .negated(let inner):
            let type = try staticType(inner)
            if let type, !type.isNumeric {
                throw DataError.invalidQuery("A minus sign applies to numbers, not to \(type.rawValue) values")
            }
            return type
        case .arithmetic(_, let left, let right):
            let types = [try staticType(left), try staticType(right)]
            for type in types.compactMap({ $0 }) where !type.isNumeric {
                throw DataError.invalidQuery("Arithmetic applies to numbers, not to \(type.rawValue) values")
            }
            return types.contains(.double) ? .double : .int
        case .function(let name, let arguments):
            switch name {
            case "count": return .int
            case "sum", "avg": return .double
            case let geo where GeoFunctions.contains(geo): return .double
            case let scalar where ScalarFunctions.all[scalar] != nil: return ScalarFunctions.all[scalar]?.result
            default:
                guard let first = arguments.first else { return nil }
                return try staticType(first)
            }
        }
    }

    private func describe(_ value: ValueExpression) -> String {
        if case .property(let path) = value { return path.description }
        return "value"
    }
}
