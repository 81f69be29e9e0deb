import InternalProtocol

/// Builds single-statement writes: the change, the written objects rendered as JSON, and the
/// change event (``ChangeEvents``, decoded once committed) in one round trip.
enum WriteStatements {
    /// What a change event says happened.
    enum Change: String {
        case create, update, upsert, delete, bulkCreate, bulkUpdate, bulkDelete, bulkUpsert

        /// The event's name, as real-time subscriptions spell it.
        var event: String {
            switch self {
            case .create: "created"
            case .update: "updated"
            case .upsert: "upserted"
            case .delete: "deleted"
            case .bulkCreate: "bulk-created"
            case .bulkUpdate: "bulk-updated"
            case .bulkDelete: "bulk-deleted"
            case .bulkUpsert: "bulk-upserted"
            }
        }
    }

    /// What an insert does with an object whose `objectId` is already taken.
    enum Conflict {
        /// The statement fails (the primary key's unique violation): a create.
        case fail
        /// An upsert: the existing row is updated only where the caller's Update grant admits it
        /// (as an update's `WHERE` would); any other is left as it is and not returned, so the
        /// statement returns fewer rows than it carries.
        case update(AccessGrant)

        /// Whether an object's `objectId` may name an existing row (an upsert).
        var isUpsert: Bool {
            switch self {
            case .fail: false
            case .update: true
            }
        }

        /// Whether the statement may pass over some of its objects (rows the grant does not admit).
        var maySkipRows: Bool {
            switch self {
            case .fail: false
            case .update(let grant): grant.rowFilter != nil
            }
        }
    }

    /// `WITH w AS (INSERT … RETURNING t.*)` for one or more prepared objects with known ids.
    static func insert(
        _ objects: [(id: String, object: PreparedObject)], ownerId: String?, table: TableSchema, schema: String,
        onConflict conflict: Conflict, into sql: inout SQL
    ) throws {
        var columns: [ColumnSchema] = []
        for (_, object) in objects {
            for (column, _) in object.assignments where !columns.contains(column) { columns.append(column) }
        }
        sql.append("WITH w AS (INSERT INTO ")
        sql.table(schema, table.name)
        sql.append(" AS t (\"objectId\", \"ownerId\"")
        for column in columns {
            sql.append(", ")
            sql.identifier(column.name)
        }
        sql.append(") VALUES ")
        try sql.list(objects) { sql, entry in
            sql.append("(")
            sql.bind(.text(entry.id))
            sql.append(", ")
            sql.bind(ownerId.map(SQLValue.text) ?? .null("text"))
            for column in columns {
                sql.append(", ")
                guard let value = entry.object.assignments.first(where: { $0.column == column })?.value else {
                    sql.append("DEFAULT")
                    continue
                }
                try write(value, for: column, table: table, into: &sql)
            }
            sql.append(")")
        }
        if case .update(let grant) = conflict {
            sql.append(" ON CONFLICT (\"objectId\") DO UPDATE SET \"updated\" = date_trunc('milliseconds', now())")
            for column in columns {
                sql.append(", ")
                sql.identifier(column.name)
                sql.append(" = ")
                // Objects that leave a column out keep its stored value when they update.
                let silent = objects.filter { !$0.object.assignments.contains { $0.column == column } }
                if silent.isEmpty {
                    sql.append("excluded.")
                    sql.identifier(column.name)
                    continue
                }
                sql.append("CASE WHEN excluded.\"objectId\" IN (")
                sql.list(silent) { sql, entry in sql.bind(.text(entry.id)) }
                sql.append(") THEN t.")
                sql.identifier(column.name)
                sql.append(" ELSE excluded.")
                sql.identifier(column.name)
                sql.append(" END")
            }
            // `t` is the existing row here: one the caller may not update stays untouched.
            if let rowFilter = grant.rowFilter {
                sql.append(" WHERE ")
                rowFilter(&sql, "t")
            }
        }
        sql.append(" RETURNING t.*)")
    }

    /// `WITH w AS (UPDATE … SET … WHERE <filter> RETURNING t.*)`.
    static func update(
        _ object: PreparedObject, table: TableSchema, schema: String, into sql: inout SQL,
        filter: (inout SQL) throws -> Void
    ) throws {
        sql.append("WITH w AS (UPDATE ")
        sql.table(schema, table.name)
        sql.append(" AS t SET \"updated\" = date_trunc('milliseconds', now())")
        for (column, value) in object.assignments {
            sql.append(", ")
            sql.identifier(column.name)
            sql.append(" = ")
            try write(value, for: column, table: table, into: &sql)
        }
        sql.append(" WHERE ")
        try filter(&sql)
        sql.append(" RETURNING t.*)")
    }

    /// `WITH w AS (DELETE … WHERE <filter> RETURNING t.*)`.
    static func delete(
        table: TableSchema, schema: String, into sql: inout SQL, filter: (inout SQL) throws -> Void
    ) throws {
        sql.append("WITH w AS (DELETE FROM ")
        sql.table(schema, table.name)
        sql.append(" AS t WHERE ")
        try filter(&sql)
        sql.append(" RETURNING t.*)")
    }

    /// `t."objectId" IN (SELECT t."objectId" FROM <table> t WHERE <filter> ORDER BY t."created",
    /// t."objectId" LIMIT … OFFSET …) AND <access filter>`: a limited bulk delete's rows, chosen
    /// in the default find order and removed by the same statement. `filter` writes the access
    /// filter and condition over `t`, which inside the subquery is the subquery's own row; the
    /// access filter is applied again to the row being removed.
    static func window(
        _ window: DeletionWindow, table: TableSchema, schema: String, grant: AccessGrant, into sql: inout SQL,
        filter: (inout SQL) throws -> Void
    ) throws {
        sql.append("t.\"objectId\" IN (SELECT t.\"objectId\" FROM ")
        sql.table(schema, table.name)
        sql.append(" t WHERE ")
        try filter(&sql)
        sql.append(" ORDER BY t.\"created\", t.\"objectId\"")
        if let limit = window.limit {
            sql.append(" LIMIT ")
            sql.bind(.integer(Int64(limit)))
        }
        sql.append(" OFFSET ")
        sql.bind(.integer(Int64(window.offset)))
        sql.append(")")
        if let rowFilter = grant.rowFilter {
            sql.append(" AND (")
            rowFilter(&sql, "t")
            sql.append(")")
        }
    }

    private static func write(_ value: WriteValue, for column: ColumnSchema, table: TableSchema, into sql: inout SQL)
        throws
    {
        switch value {
        case .bound(let bound): sql.bind(bound)
        case .expression(let expression):
            let compiler = ExpressionCompiler(table: table)
            sql.append("(")
            try compiler.value(expression, context: column.type, into: &sql)
            sql.append(")::" + ValueEncoding.sqlCast(column.type))
        case .operation(let operation):
            operation.write(column: column, into: &sql)
        }
    }

    /// After a `WITH w AS (…)`: each written object as JSON, with its change event.
    static func selectObjects(table: TableSchema, change: Change, appID: String, into sql: inout SQL) {
        sql.append(" SELECT row_to_json(r.*)::text, ")
        ChangeEvents.emitEach(change, table: table, appID: appID, rowAlias: "t", answer: "r", into: &sql)
        sql.append(" FROM w t CROSS JOIN LATERAL (SELECT ")
        Projection.columns(of: table, rowAlias: "t", into: &sql)
        sql.append(") r")
    }

    /// After a `WITH w AS (…)`: the number of rows written, with the change event(s) — none
    /// when nothing changed. `whereClause` names a bulk update's or delete's rows in the
    /// event. With `cascade` (a delete, in an app using `_parent_id`), the deleted objects'
    /// children go too.
    static func selectCount(
        table: TableSchema, change: Change, appID: String, whereClause: String? = nil, cascade: ParentCascade? = nil,
        into sql: inout SQL
    ) {
        sql.append(" SELECT count(*), ")
        if let cascade {
            sql.append("data.delete_children(")
            sql.bind(.text(appID))
            sql.append(", ")
            sql.bind(.text(cascade.schema))
            sql.append(", array_agg(w.\"objectId\"), ")
            sql.bind(.textArray(cascade.tables))
            sql.append("), ")
        }
        ChangeEvents.emitAggregate(change, table: table, appID: appID, whereClause: whereClause, into: &sql)
        sql.append(" FROM w HAVING count(*) > 0")
    }

    /// `t."objectId" = $n`.
    static func byId(_ id: String, into sql: inout SQL) {
        sql.append("t.\"objectId\" = ")
        sql.bind(.text(id))
    }

    /// `t."objectId" = $n AND <access filter>`.
    static func byId(_ id: String, grant: AccessGrant, into sql: inout SQL) {
        byId(id, into: &sql)
        if let filter = grant.rowFilter {
            sql.append(" AND ")
            filter(&sql, "t")
        }
    }
}
