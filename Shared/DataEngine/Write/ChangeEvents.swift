import InternalProtocol

/// Change events, written by the writing statement itself into the write-ahead log as logical
/// messages (`pg_logical_emit_message`, prefix ``prefix``): readers decoding the log get them in
/// commit order, only once committed, with no lock shared between writers (unlike `NOTIFY`).
/// A table's writes emit only while some real-time instance watches it
/// (`data.watched_tables`); writes to other tables pay one primary-key probe.
///
/// A message's prefix names the app and table (`baas.data/{app}/{table}`: app ids and table
/// names hold no `/`), so the log can be filed without reading the JSON. Its content is
/// `{"event", …}` with, per event: `object` (created, updated,
/// upserted: the object as REST answers it; deleted: as it was), `objects` (bulk-created,
/// bulk-upserted), or `whereClause`, `count` and `touched` (bulk-updated, bulk-deleted: up to
/// ``touchedLimit`` `[objectId, ownerId]` pairs, more than that only counted).
///
/// Objects in events keep `FILE_REF` values as paths, never as the writer's URLs: those carry
/// the API key the writer addressed the app by, and events reach every subscriber (real-time
/// delivery renders each subscriber its own URLs).
enum ChangeEvents {
    /// The logical messages' prefix, before `/{app}/{table}`.
    static let prefix = "baas.data"
    /// The most touched objects a bulk event lists.
    static let touchedLimit = 1_000

    /// `CASE WHEN <watched> THEN <emit(object)> END`, per written row `rowAlias` whose REST
    /// answer is row `answer`: the answer itself when it holds no URL of a file, else the row
    /// rendered again with paths.
    static func emitEach(
        _ change: WriteStatements.Change, table: TableSchema, appID: String, rowAlias: String, answer: String,
        into sql: inout SQL
    ) {
        sql.append("CASE WHEN ")
        watched(table: table, appID: appID, into: &sql)
        sql.append(" THEN ")
        emit(change, table: table, appID: appID, into: &sql) { sql in
            sql.append(", 'object', ")
            if FileLinks.base == nil || !FileReference.hasColumns(in: table) {
                sql.append("row_to_json(\(answer).*)")
            } else {
                // The answer's file URLs carry the writer's API key.
                sql.append("(SELECT row_to_json(e.*) FROM (SELECT ")
                FileReference.asPaths { Projection.columns(of: table, rowAlias: rowAlias, into: &sql) }
                sql.append(") e)")
            }
        }
        sql.append(" END")
    }

    /// A scalar subquery after `WITH w AS (… RETURNING t.*)` emitting the statement's event(s)
    /// for a delete or a bulk write.
    static func emitAggregate(
        _ change: WriteStatements.Change, table: TableSchema, appID: String, whereClause: String?, into sql: inout SQL
    ) {
        switch change {
        case .bulkUpdate, .bulkDelete:
            sql.append("(SELECT ")
            emit(change, table: table, appID: appID, into: &sql) { sql in
                sql.append(", 'whereClause', ")
                sql.bind(whereClause.map(SQLValue.text) ?? .null("text"))
                sql.append(
                    """
                    , 'count', (SELECT count(*) FROM w), 'touched', (SELECT json_agg(json_build_array(s."objectId", s."ownerId"))
                     FROM (SELECT "objectId", "ownerId" FROM w LIMIT \(touchedLimit + 1)) s)
                    """)
            }
            sql.append(" WHERE ")
            watched(table: table, appID: appID, into: &sql)
            sql.append(")")
        case .bulkCreate, .bulkUpsert:
            sql.append("(SELECT ")
            emit(change, table: table, appID: appID, into: &sql) { sql in
                sql.append(", 'objects', json_agg(row_to_json(r.*))")
            }
            rendered(table: table, into: &sql)
            sql.append(" WHERE ")
            watched(table: table, appID: appID, into: &sql)
            sql.append(" HAVING count(*) > 0)")
        case .create, .update, .upsert, .delete:
            sql.append("(SELECT count(")
            emit(change, table: table, appID: appID, into: &sql) { sql in sql.append(", 'object', row_to_json(r.*)") }
            sql.append(")")
            rendered(table: table, into: &sql)
            sql.append(" WHERE ")
            watched(table: table, appID: appID, into: &sql)
            sql.append(")")
        }
    }

    /// ` FROM (SELECT <the REST projection, FILE_REF as paths> FROM w t) r`.
    private static func rendered(table: TableSchema, into sql: inout SQL) {
        sql.append(" FROM (SELECT ")
        FileReference.asPaths { Projection.columns(of: table, rowAlias: "t", into: &sql) }
        sql.append(" FROM w t) r")
    }

    /// `pg_logical_emit_message(true, 'baas.data/{app}/{table}', json_build_object('event', …<members>)::text)`.
    private static func emit(
        _ change: WriteStatements.Change, table: TableSchema, appID: String, into sql: inout SQL,
        members: (inout SQL) -> Void
    ) {
        sql.append("pg_logical_emit_message(true, ")
        sql.bind(.text("\(prefix)/\(appID)/\(table.name)"))
        sql.append(", json_build_object('event', '\(change.event)'")
        members(&sql)
        sql.append(")::text)")
    }

    /// `EXISTS (…)`: whether a real-time instance watches the table now.
    private static func watched(table: TableSchema, appID: String, into sql: inout SQL) {
        sql.append("EXISTS (SELECT 1 FROM data.watched_tables WHERE app_id = ")
        sql.bind(.text(appID))
        sql.append(" AND table_name = ")
        sql.bind(.text(table.name))
        sql.append(" AND watched_until > now())")
    }
}
