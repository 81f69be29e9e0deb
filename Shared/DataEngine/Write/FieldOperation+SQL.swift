/// The SQL of field operations: the column's new value computed from its current value, so
/// concurrent updates compose instead of overwriting each other. The JSON helpers
/// (`data.json_write`, `data.json_array_append`, `data.json_array`) are created by
/// ``CatalogMigrations``.
extension FieldOperation {
    /// Appends the new value of `column` (the row is aliased `t`).
    func write(column: ColumnSchema, into sql: inout SQL) {
        switch self {
        case .json(let steps): Self.json(steps, column: column, into: &sql)
        case .push(let values):
            Self.array(column, into: &sql, prefix: "(", suffix: " || ")
            sql.bind(.json(JSONValue.array(values).jsonText))
            sql.append(")")
        case .pull(let pullOperator, let value):
            Self.keepingElements(of: column, into: &sql) { sql in Self.match(pullOperator, value, into: &sql) }
        case .pullAll(let values):
            Self.keepingElements(of: column, into: &sql) { sql in Self.match(.in, .array(values), into: &sql) }
        case .pop(let first):
            Self.array(column, into: &sql, prefix: "(", suffix: first ? " - 0)" : " - (-1))")
        case .addToSet(let values):
            Self.addToSet(values, column: column, into: &sql)
        case .increment(let amount):
            sql.append("(COALESCE(t.")
            sql.identifier(column.name)
            sql.append(", 0) + ")
            sql.bind(amount.integerValue.map(SQLValue.integer) ?? .double(ValueEncoding.double(amount) ?? 0))
            sql.append(")::" + ValueEncoding.sqlCast(column.type))
        }
    }

    /// `f_n(…f_1(base, path_1, …)…, path_n, …)`: prefixes first, then the base, then each
    /// step's arguments in order, so bind numbers follow the steps.
    private static func json(_ steps: [JSONStep], column: ColumnSchema, into sql: inout SQL) {
        for step in steps.reversed() {
            switch step {
            case .write: sql.append("data.json_write(")
            case .remove: sql.append("(")
            case .arrayAppend: sql.append("data.json_array_append(")
            case .arrayInsert: sql.append("jsonb_insert(")
            }
        }
        base(for: steps.first, column: column, into: &sql)
        for step in steps {
            switch step {
            case .write(let path, let value, let mode):
                arguments(path, value, into: &sql)
                sql.append(", '\(mode.rawValue)')")
            case .remove(let path):
                sql.append(" #- ")
                bind(path, into: &sql)
                sql.append(")")
            case .arrayAppend(let path, let value), .arrayInsert(let path, let value):
                arguments(path, value, into: &sql)
                sql.append(")")
            }
        }
    }

    /// The current value; a null column starts as `{}` or `[]` (by the first step's shape)
    /// for steps that write, so `JSON_SET` on an empty column creates the document.
    private static func base(for step: JSONStep?, column: ColumnSchema, into sql: inout SQL) {
        let path: JSONPath
        switch step {
        case .write(let writePath, _, _)?, .arrayInsert(let writePath, _)?: path = writePath
        case .arrayAppend(let appendPath, _)?: path = appendPath
        case .remove?, nil:
            sql.append("t.")
            sql.identifier(column.name)
            return
        }
        let startsAsArray: Bool
        switch (path.steps.first, step) {
        case (.index?, _), (nil, .arrayAppend?): startsAsArray = true
        default: startsAsArray = false
        }
        sql.append("COALESCE(t.")
        sql.identifier(column.name)
        sql.append(startsAsArray ? ", '[]'::jsonb)" : ", '{}'::jsonb)")
    }

    private static func arguments(_ path: JSONPath, _ value: JSONValue, into sql: inout SQL) {
        sql.append(", ")
        bind(path, into: &sql)
        sql.append(", ")
        sql.bind(.json(value.jsonText))
    }

    /// `ARRAY[$1, $2]::text[]`: each path element bound.
    private static func bind(_ path: JSONPath, into sql: inout SQL) {
        sql.append("ARRAY[")
        sql.list(path.elements) { sql, element in sql.bind(.text(element)) }
        sql.append("]::text[]")
    }

    /// `data.json_array(t.col)` (an error unless the column holds an array or null) between
    /// `prefix` and `suffix`.
    private static func array(_ column: ColumnSchema, into sql: inout SQL, prefix: String, suffix: String) {
        sql.append(prefix + "data.json_array(t.")
        sql.identifier(column.name)
        sql.append(")" + suffix)
    }

    /// The array without the elements `removed` matches (`e`), order kept.
    private static func keepingElements(of column: ColumnSchema, into sql: inout SQL, removed: (inout SQL) -> Void) {
        array(
            column, into: &sql,
            prefix: "(SELECT COALESCE(jsonb_agg(e ORDER BY i), '[]'::jsonb) FROM jsonb_array_elements(",
            suffix: ") WITH ORDINALITY AS a(e, i) WHERE NOT (")
        removed(&sql)
        sql.append("))")
    }

    /// Whether element `e` matches; ordering operators compare values of the same JSON type only.
    private static func match(_ pullOperator: PullOperator, _ value: JSONValue, into sql: inout SQL) {
        let bound = SQLValue.json(value.jsonText)
        switch pullOperator {
        case .eq, .ne:
            sql.append(pullOperator == .eq ? "e = " : "e <> ")
            sql.bind(bound)
        case .lt, .lte, .gt, .gte:
            let symbol = ["lt": "<", "lte": "<=", "gt": ">", "gte": ">="][pullOperator.rawValue] ?? "="
            sql.append("jsonb_typeof(e) = jsonb_typeof(")
            sql.bind(bound)
            sql.append(") AND e \(symbol) ")
            sql.bind(bound)
        case .in, .nin:
            sql.append(
                pullOperator == .in ? "e IN (SELECT jsonb_array_elements(" : "e NOT IN (SELECT jsonb_array_elements(")
            sql.bind(bound)
            sql.append("))")
        }
    }

    /// The array (`d`) followed by each value it lacks, first occurrences in request order.
    private static func addToSet(_ values: [JSONValue], column: ColumnSchema, into sql: inout SQL) {
        sql.append(
            "(SELECT d || COALESCE((SELECT jsonb_agg(v ORDER BY i) FROM (SELECT v, min(i) AS i"
                + " FROM jsonb_array_elements(")
        sql.bind(.json(JSONValue.array(values).jsonText))
        sql.append(
            ") WITH ORDINALITY AS x(v, i) WHERE v NOT IN (SELECT jsonb_array_elements(d)) GROUP BY v) n),"
                + " '[]'::jsonb)")
        array(column, into: &sql, prefix: " FROM (SELECT ", suffix: " AS d) s)")
    }
}
