import DataAPI
import DataEngine
import Hummingbird
import InternalProtocol
import Permissions
import QueryLanguage
import ServiceRuntime

extension DataRoutes {
    /// Backbeam's BQL: finds, removals by query (`removeObjects:offset:`, `removeAllObjects`) and
    /// the refresh of one object with the relationships its query joins. All three live under
    /// `data/{table}/bql` so that they shadow no relation column of the relation API's
    /// `data/{table}/{id}/{relation}` (only the relations `remove` and `refresh` of an object
    /// whose id is `bql`).
    func addBQL(to router: inout PublicRoutes) {
        router.add(
            .post, "data/:table/bql/remove", permission: .data(.remove),
            doc: .bqlRemove.path("table", DataRoutes.cleared)
        ) { call in
            try await bqlRemove(call)
        }
        router.add(.post, "data/:table/bql/refresh", permission: .data(.find), doc: .bqlRefresh) { call in
            try await bqlRefresh(call)
        }
        router.add(.post, "data/:table/bql", permission: .data(.find), doc: .bqlQuery) { call in
            try await bql(call)
        }
    }

    /// BQL: `{"query": "[join r [having …]] where x > ?", "params": [...], "limit": n, "offset": n}`
    /// answers `{"objects": [...], "totalCount": n}` as Backbeam clients read them, each object
    /// carrying the relationships the query joins.
    private func bql(_ call: PublicCall) async throws -> Response {
        let body = try call.object
        let parsed = try Self.bqlQuery(body)
        var query = FindQuery()
        query.condition = parsed.condition
        Self.join(parsed, into: &query)
        // As a removal's: a limit or offset that is no integer in range is 1016, never the default.
        let most = FindQuery.maximumPageSize
        query.pageSize =
            try Self.integer(body["limit"], in: 1...most, "limit must be an integer between 1 and \(most)")
            ?? FindQuery.defaultPageSize
        query.offset =
            try Self.integer(body["offset"], in: 0...Int(Int32.max), "offset must be an integer of at least 0") ?? 0
        let identity = call.identity
        async let objects = engine.find(call.table, query: query, identity: identity, logger: call.context.logger)
        async let total = engine.count(call.table, query: query, identity: identity, logger: call.context.logger)
        let (page, count) = try await (objects, total)
        return .json(
            .object(JSONObject([("objects", .array(page.map(JSONValue.raw))), ("totalCount", .integer(Int64(count)))])))
    }

    /// `{"query": "where x > ?", "params": [...], "limit"?: n, "offset"?: n}` removes, in one
    /// statement, the matching objects the caller may remove: with a `limit`, only the first
    /// `limit` of them after `offset` in creation order; without one, every match after `offset`.
    /// Answers `{"removed": n}`. A query that joins is refused (1017).
    private func bqlRemove(_ call: PublicCall) async throws -> Response {
        let body = try call.object
        let text = try Self.bqlText(body)
        let parameters = try Self.bqlParameters(body)
        let condition = try DataError.parsing { () throws(QueryLanguageError) in
            try BQL.condition(text, parameters: parameters)
        }
        let window = try Self.removal(body)
        let removed = try await engine.deleteBulk(
            call.table, condition: condition == .constant(true) ? nil : condition, window: window,
            identity: call.identity, logger: call.context.logger)
        return .json(.object(JSONObject([("removed", .integer(Int64(removed)))])))
    }

    /// `{"objectId": id, "query"?: "join r [having x > ?]…", "params"?: [...]}` answers object `id`
    /// as a find answers it — every regular field, and each relationship the query joins (its
    /// `having` choosing the related objects). The query names no condition on the object
    /// itself: a `where` is refused (1017); an unknown id is 1000.
    private func bqlRefresh(_ call: PublicCall) async throws -> Response {
        let body = try call.object
        guard let id = body["objectId"]?.string, !id.isEmpty else {
            throw DataError.invalidBody("A BQL refresh names its object with a non-empty string \"objectId\"")
        }
        let parsed = try Self.bqlQuery(body)
        guard parsed.condition == .constant(true) else {
            throw DataError.invalidQuery("A BQL refresh only joins: its object is named by objectId, not by 'where'")
        }
        var query = FindQuery()
        Self.join(parsed, into: &query)
        return .jsonText(
            try await engine.object(
                call.table, id: id, query: query, identity: call.identity, logger: call.context.logger))
    }

    /// The body's `query` parsed with its `params`.
    private static func bqlQuery(_ body: JSONObject) throws -> BQLQuery {
        let text = try bqlText(body)
        let parameters = try bqlParameters(body)
        return try DataError.parsing { () throws(QueryLanguageError) in try BQL.query(text, parameters: parameters) }
    }

    /// The body's `query`: absent or null is the empty query (every object); anything but a
    /// string is refused (1022).
    private static func bqlText(_ body: JSONObject) throws -> String {
        switch body["query"] {
        case nil, .null?: return ""
        case .string(let text)?: return text
        default: throw DataError.invalidBody("\"query\" must be a BQL string")
        }
    }

    /// The body's `params`: absent or null is none; anything but an array is refused (1022).
    private static func bqlParameters(_ body: JSONObject) throws -> [ValueExpression] {
        switch body["params"] {
        case nil, .null?: return []
        case .array(let items)?: return try bqlList(items)
        default: throw DataError.invalidBody("\"params\" must be an array of the query's ? values")
        }
    }

    /// Each joined relationship loads with the objects, its `having` choosing which related
    /// objects come along.
    private static func join(_ parsed: BQLQuery, into query: inout FindQuery) {
        for join in parsed.joins {
            query.relationPaths.append([join.relation])
            if let having = join.having { query.relationConditions[join.relation] = having }
        }
    }

    /// A removal's `limit` (1 through ``DeletionWindow/maximumLimit``; absent or null: every
    /// match) and `offset` (at least 0; absent or null: 0), refused with 1016 otherwise — never
    /// read as "no limit", which would remove more than asked.
    private static func removal(_ body: JSONObject) throws -> DeletionWindow {
        let maximum = DeletionWindow.maximumLimit
        let limit = try integer(body["limit"], in: 1...maximum, "limit must be an integer between 1 and \(maximum)")
        let offset = try integer(body["offset"], in: 0...Int(Int32.max), "offset must be an integer of at least 0")
        return DeletionWindow(limit: limit, offset: offset ?? 0)
    }

    /// `value` as an integer within `range`; nil when absent or null, 1016 with `message` otherwise.
    private static func integer(_ value: JSONValue?, in range: ClosedRange<Int>, _ message: String) throws -> Int? {
        guard let value, value != .null else { return nil }
        guard let number = value.integerValue, let integer = Int(exactly: number), range.contains(integer) else {
            throw DataError.invalidParameter(message)
        }
        return integer
    }

    /// BQL parameters, or the items of a list parameter, refused beyond the list-item limit
    /// before any is converted.
    private static func bqlList(_ items: [JSONValue]) throws -> [ValueExpression] {
        let limit = QueryLimits.standard.maximumListItems
        guard items.count <= limit else { throw DataError.queryTooComplex("BQL lists have at most \(limit) items") }
        return try items.map(bqlParameter)
    }

    private static func bqlParameter(_ value: JSONValue) throws -> ValueExpression {
        switch value {
        case .string(let text): return .string(text)
        case .integer(let integer): return .integer(integer)
        case .number(let number): return .number(number)
        case .bool(let bool): return .boolean(bool)
        case .null: return .null
        case .array(let items): return .list(try bqlList(items))
        case .object(let object):
            guard let id = object["objectId"]?.string ?? object["id"]?.string else {
                throw DataError.invalidBody("A BQL object parameter needs an objectId")
            }
            return .string(id)
        case .raw: throw DataError.invalidBody("Unsupported BQL parameter")
        }
    }
}
