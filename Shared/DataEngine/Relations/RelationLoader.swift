import InternalProtocol
import Permissions
import PostgresNIO
import QueryLanguage

/// Loads related objects for a page of found objects: one statement per relation and level,
/// never per object. Each statement takes every parent of its level as one array and pages each
/// parent's children in SQL (`relationsPageSize`, link order), through the caller's Find filter on
/// the children and LoadRelations filter on the parents. A 1:1 relation becomes an object or
/// null, a 1:N relation an array; relations not asked for stay absent.
struct RelationLoader {
    let catalog: AppCatalog
    let identity: Identity
    let access: AccessControl
    let session: DatabaseSession
    let pageSize: Int
    /// Conditions on the children of the found objects' relations, by lower-cased relation name.
    var rootConditions: [String: Condition] = [:]

    /// At most this many relation statements and loaded related objects per request (1018 beyond).
    static let statementLimit = 200
    static let objectLimit = 10_000

    /// What one level still loads: the remaining named paths and the remaining blanket depth.
    struct Request {
        var paths: [[String]]
        var depth: Int
    }

    /// One relation level: its table, the objects loaded at it by id, and (below the root) which
    /// children each parent of the level above links to, in order.
    private struct Level {
        let table: TableSchema
        let relation: RelationSchema?
        let parent: Int?
        /// Each object's JSON text as PostgreSQL rendered it, by id (spliced, never re-rendered).
        var objects: [String: String] = [:]
        var order: [String] = []
        var links: [String: [String]] = [:]
        /// How many times each object appears in the answer (a child shared by two parents is
        /// written under both).
        var copies: [String: Int] = [:]
    }

    /// `rows` (objects as JSON text) with their relations attached as `query` asks; auto-load
    /// columns of `table` always.
    func attach(to rows: [String], table: TableSchema, query: FindQuery) async throws -> [String] {
        let request = Request(paths: query.relationPaths, depth: query.relationsDepth)
        for path in request.paths { try validate(path[...], from: table) }
        guard !rows.isEmpty, request.depth > 0 || !request.paths.isEmpty || table.relations.contains(where: \.autoLoad)
        else {
            return rows
        }
        var root = Level(table: table, relation: nil, parent: nil)
        for row in rows {
            guard let id = try JSONParser.parse(row).object?["objectId"]?.string else { return rows }
            root.objects[id] = row
            root.order.append(id)
            root.copies[id] = 1
        }
        var levels = [root]
        var pending: [(index: Int, request: Request, isRoot: Bool)] = [(0, request, true)]
        var loaded = 0
        var written = 0
        while !pending.isEmpty {
            let (index, request, isRoot) = pending.removeFirst()
            for (relation, childRequest) in Self.relationsToLoad(levels[index].table, request, isRoot: isRoot) {
                guard levels.count <= Self.statementLimit else {
                    throw DataError.queryTooComplex(
                        "Loading these relations takes more than \(Self.statementLimit) statements")
                }
                var child = try await load(
                    relation, of: levels[index], parentIndex: index, budget: Self.objectLimit - loaded,
                    condition: isRoot ? rootConditions[relation.name.lowercased()] : nil)
                loaded += child.links.values.reduce(0) { $0 + $1.count }
                written += try Self.countCopies(&child, parent: levels[index], writtenSoFar: written)
                levels.append(child)
                if !child.objects.isEmpty, childRequest.depth > 0 || !childRequest.paths.isEmpty {
                    pending.append((levels.count - 1, childRequest, false))
                }
            }
        }
        return root.order.map { id in render(id, level: 0, levels: levels) }
    }

    /// Fills `child.copies` from its parents' and answers how many objects the level adds to the
    /// answer; 1018 once the answer would hold more than ``objectLimit`` related objects (shared
    /// children repeat under every parent, so a few links can nest into a huge tree).
    private static func countCopies(_ child: inout Level, parent: Level, writtenSoFar: Int) throws -> Int {
        var added = 0
        for (parentID, children) in child.links {
            let times = parent.copies[parentID] ?? 0
            for id in children {
                child.copies[id, default: 0] += times
                added += times
                guard writtenSoFar + added <= objectLimit else {
                    throw DataError.queryTooComplex(
                        "Loading these relations answers more than \(objectLimit) related objects")
                }
            }
        }
        return added
    }

    /// Refuses a path naming something other than a relation (1011, 1027), whatever the data;
    /// past a `*` any relation may follow.
    private func validate(_ path: ArraySlice<String>, from table: TableSchema) throws {
        guard let name = path.first, name != "*" else { return }
        guard let relation = table.relation(named: name) else {
            if table.column(named: name) != nil { throw DataError.notARelation(name, table: table.name) }
            throw DataError.columnNotFound(name, table: table.name)
        }
        guard let child = catalog.table(named: relation.relatedTable) else {
            throw DataError.tableNotFound(relation.relatedTable)
        }
        try validate(path.dropFirst(), from: child)
    }

    /// The relations of `table` a level loads, with what each child level loads in turn.
    static func relationsToLoad(_ table: TableSchema, _ request: Request, isRoot: Bool) -> [(RelationSchema, Request)] {
        table.relations.compactMap { relation in
            let named = request.paths.filter { $0[0] == "*" || $0[0].lowercased() == relation.name.lowercased() }
            guard !named.isEmpty || request.depth > 0 || (isRoot && relation.autoLoad) else { return nil }
            let below = named.map { Array($0.dropFirst()) }.filter { !$0.isEmpty }
            return (relation, Request(paths: below, depth: max(request.depth - 1, 0)))
        }
    }

    /// One statement: every parent's first `pageSize` children of `relation` that the caller may find.
    private func load(
        _ relation: RelationSchema, of parent: Level, parentIndex: Int, budget: Int, condition: Condition?
    ) async throws -> Level {
        guard let childTable = catalog.table(named: relation.relatedTable) else {
            throw DataError.tableNotFound(relation.relatedTable)
        }
        var level = Level(table: childTable, relation: relation, parent: parentIndex)
        guard
            let parentGrant = try access.grantUnlessDenied(
                identity, .loadRelations, table: parent.table.name, catalog: catalog),
            let childGrant = try access.grantUnlessDenied(identity, .find, table: childTable.name, catalog: catalog)
        else {
            return level
        }
        let sql = try statement(
            relation, parents: Array(parent.objects.keys), parentTable: parent.table, childTable: childTable,
            grants: (parentGrant, childGrant), condition: condition, budget: budget)
        let rows = try await session.rows(sql)
        guard rows.count <= budget else {
            throw DataError.queryTooComplex("Loading these relations returns more than \(Self.objectLimit) objects")
        }
        for row in rows {
            let (parentID, id, text) = try row.decode((String, String, String).self)
            level.objects[id] = text
            level.links[parentID, default: []].append(id)
        }
        return level
    }

    /// The statement of one level: for each of `parents`, its first children through `relation`
    /// (one for a 1:1) that `grants.child` admits and `condition` accepts, if `grants.parent`
    /// admits the parent; at most `budget + 1` rows in all.
    func statement(
        _ relation: RelationSchema, parents: [String], parentTable: TableSchema, childTable: TableSchema,
        grants: (parent: AccessGrant, child: AccessGrant), condition: Condition?, budget: Int
    ) throws -> SQL {
        var sql = SQL("SELECT p.parent, r.\"objectId\", row_to_json(r.*)::text FROM unnest(")
        sql.bind(.textArray(parents))
        sql.append(") AS p(parent)")
        if let filter = grants.parent.rowFilter {
            sql.append(" JOIN ")
            sql.table(catalog.schemaName, parentTable.name)
            sql.append(" pt ON pt.\"objectId\" = p.parent AND ")
            filter(&sql, "pt")
        }
        sql.append(" CROSS JOIN LATERAL (SELECT ")
        Projection.columns(of: childTable, rowAlias: "t", into: &sql)
        sql.append(" FROM ")
        sql.table(catalog.schemaName, childTable.name)
        sql.append(" t JOIN ")
        sql.table(catalog.schemaName, relation.linkTable)
        sql.append(" l ON l.\"child\" = t.\"objectId\" AND l.\"parent\" = p.parent WHERE ")
        try DataEngine.filter(
            condition, grant: grants.child, table: childTable,
            relations: RelationPaths(catalog: catalog, access: access, identity: identity), into: &sql)
        sql.append(" ORDER BY l.\"position\" LIMIT ")
        sql.bind(.integer(Int64(relation.isMany ? pageSize : 1)))
        sql.append(") r LIMIT ")
        sql.bind(.integer(Int64(budget + 1)))
        return sql
    }

    /// Object `id` of level `index` with the relations of the levels below it attached, as JSON
    /// text: PostgreSQL's rendering with the relation members spliced in before its closing brace.
    private func render(_ id: String, level index: Int, levels: [Level]) -> String {
        let text = levels[index].objects[id] ?? "{}"
        var members = ""
        for (childIndex, child) in levels.enumerated() where child.parent == index {
            guard let relation = child.relation else { continue }
            let children = (child.links[id] ?? []).map { render($0, level: childIndex, levels: levels) }
            let value = relation.isMany ? "[" + children.joined(separator: ",") + "]" : children.first ?? "null"
            members += "," + JSONValue.string(relation.name).jsonText + ":" + value
        }
        if members.isEmpty { return text }
        return text == "{}" ? "{" + members.dropFirst() + "}" : String(text.dropLast()) + members + "}"
    }
}
