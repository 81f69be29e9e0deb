import InternalProtocol
import QueryLanguage

/// The statements of one relation change or load on one parent object. Children are chosen in
/// SQL (by id or by a where clause, always through the caller's Find filter), so a where clause
/// matching a million rows never travels to the service.
struct RelationStatements {
    let resolved: ResolvedRelation
    let parentID: String
    /// How where clauses selecting children reach related tables.
    var relations: RelationPaths?

    /// The children a change names: a subquery of `id` and `n` (the order links are made in).
    struct Selection {
        let children: RelationChildren
        let grant: AccessGrant
        let table: TableSchema
        let schema: String
        let relations: RelationPaths?

        func write(into sql: inout SQL) throws {
            switch children {
            case .ids(let ids):
                var seen = Set<String>()
                sql.append("SELECT t.\"objectId\" AS id, g.n FROM ")
                sql.table(schema, table.name)
                sql.append(" t JOIN unnest(")
                sql.bind(.textArray(ids.filter { seen.insert($0).inserted }))
                sql.append(") WITH ORDINALITY AS g(id, n) ON t.\"objectId\" = g.id WHERE ")
                try DataEngine.filter(nil, grant: grant, table: table, into: &sql)
            case .matching(let condition):
                sql.append(
                    "SELECT t.\"objectId\" AS id, row_number() OVER (ORDER BY t.\"created\", t.\"objectId\") AS n FROM "
                )
                sql.table(schema, table.name)
                sql.append(" t WHERE ")
                try DataEngine.filter(condition, grant: grant, table: table, relations: relations, into: &sql)
            }
        }
    }

    /// The selection of `children` on the child table; a where clause that does not compile is
    /// refused here, before any statement runs.
    func selection(_ children: RelationChildren, grant: AccessGrant) throws -> Selection {
        let selection = Selection(
            children: children, grant: grant, table: resolved.child, schema: resolved.catalog.schemaName,
            relations: relations)
        var probe = SQL()
        try selection.write(into: &probe)
        return selection
    }

    /// The parent's id if it exists and every grant admits it, locked against concurrent changes
    /// of its relations (a key-share lock, so links to it can still be made).
    func lockParent(grants: [AccessGrant]) -> SQL {
        var sql = SQL("SELECT t.\"objectId\" FROM ")
        sql.table(resolved.catalog.schemaName, resolved.parent.name)
        sql.append(" t WHERE ")
        WriteStatements.byId(parentID, into: &sql)
        for grant in grants {
            guard let filter = grant.rowFilter else { continue }
            sql.append(" AND ")
            filter(&sql, "t")
        }
        sql.append(" FOR NO KEY UPDATE OF t")
        return sql
    }

    /// 1 if the parent exists and `grant` admits it, else 0.
    func findParent(grant: AccessGrant) -> SQL {
        var sql = SQL("SELECT count(*) FROM ")
        sql.table(resolved.catalog.schemaName, resolved.parent.name)
        sql.append(" t WHERE ")
        WriteStatements.byId(parentID, grant: grant, into: &sql)
        return sql
    }

    /// How many children the selection names, counting no further than `limit`.
    func countSelected(_ selection: Selection, upTo limit: Int) throws -> SQL {
        var sql = SQL("SELECT count(*) FROM (")
        try selection.write(into: &sql)
        sql.append(" LIMIT ")
        sql.bind(.integer(Int64(limit)))
        sql.append(") s")
        return sql
    }

    /// How many children the parent has now.
    func countLinks() -> SQL {
        var sql = SQL("SELECT count(*) FROM ")
        linkTable(into: &sql)
        sql.append(" l WHERE ")
        parentMatch(into: &sql)
        return sql
    }

    /// Links the selected children not linked yet, in selection order; answers how many.
    func link(_ selection: Selection) throws -> SQL {
        var sql = SQL("WITH i AS (INSERT INTO ")
        linkTable(into: &sql)
        sql.append(" (\"parent\", \"child\") SELECT ")
        sql.bind(.text(parentID))
        sql.append(", s.id FROM (")
        try selection.write(into: &sql)
        sql.append(") s ORDER BY s.n ON CONFLICT DO NOTHING RETURNING 1) SELECT count(*) FROM i")
        return sql
    }

    /// Unlinks the selected children, or with `others` every child outside the selection (set);
    /// answers how many links went.
    func unlink(_ selection: Selection, others: Bool = false) throws -> SQL {
        var sql = SQL("WITH d AS (DELETE FROM ")
        linkTable(into: &sql)
        sql.append(" l WHERE ")
        parentMatch(into: &sql)
        sql.append(others ? " AND l.\"child\" NOT IN (SELECT s.id FROM (" : " AND l.\"child\" IN (SELECT s.id FROM (")
        try selection.write(into: &sql)
        sql.append(") s) RETURNING 1) SELECT count(*) FROM d")
        return sql
    }

    private func linkTable(into sql: inout SQL) {
        sql.table(resolved.catalog.schemaName, resolved.relation.linkTable)
    }

    private func parentMatch(into sql: inout SQL) {
        sql.append("l.\"parent\" = ")
        sql.bind(.text(parentID))
    }
}

/// Restricts a find to the children one parent links to through a relation's link table; they
/// come in link order unless the query sorts.
struct LinkScope: Sendable {
    let schema: String
    let linkTable: String
    let parentID: String

    /// ` JOIN <link> l ON l."child" = t."objectId" AND l."parent" = $n`.
    func join(into sql: inout SQL) {
        sql.append(" JOIN ")
        sql.table(schema, linkTable)
        sql.append(" l ON l.\"child\" = t.\"objectId\" AND l.\"parent\" = ")
        sql.bind(.text(parentID))
    }
}
