import DataAPI
import DataEngine
import Hummingbird
import InternalProtocol
import Permissions
import QueryLanguage
import ServiceRuntime

extension DataRoutes {
    /// Finds, counts, first/last and the QuickBlox and BQL dialects.
    func addQueries(to router: inout PublicRoutes) {
        router.add(.get, "data/:table/count", permission: .data(.find), doc: .countQuery) { call in
            try await count(call, try FindQuery(try call.queryParameters, paged: false))
        }
        router.add(.post, "data/:table/count", permission: .data(.find), doc: .countByBody) { call in
            try await count(call, try FindQuery(try call.bodyQueryParameters(), paged: false))
        }
        router.add(.post, "data/:table/find", permission: .data(.find), doc: .findByBody) { call in
            try await find(call, try FindQuery(try call.bodyQueryParameters()))
        }
        router.add(.get, "data/:table/first", permission: .data(.find), doc: .firstObject) { call in
            try await edge(call, last: false)
        }
        router.add(.get, "data/:table/last", permission: .data(.find), doc: .lastObject) { call in
            try await edge(call, last: true)
        }
        router.add(.get, "data/:table/filter", permission: .data(.find), doc: .quickBloxFilter) { call in
            try await quickBlox(call)
        }
        router.add(.post, "data/:table/bql", permission: .data(.find), doc: .bqlQuery) { call in
            try await bql(call)
        }
        router.add(.get, "data/:table", permission: .data(.find), doc: .findQuery) { call in
            try await find(call, try FindQuery(try call.queryParameters))
        }
    }

    private func find(_ call: PublicCall, _ query: FindQuery) async throws -> Response {
        .jsonArray(
            try await engine.find(call.table, query: query, identity: call.identity, logger: call.context.logger))
    }

    private func count(_ call: PublicCall, _ query: FindQuery) async throws -> Response {
        let count = try await engine.count(
            call.table, query: query, identity: call.identity, logger: call.context.logger)
        return .json(.integer(Int64(count)))
    }

    private func edge(_ call: PublicCall, last: Bool) async throws -> Response {
        let query = try FindQuery(try call.queryParameters, paged: false)
        let object = try await engine.edge(
            call.table, last: last, query: query, identity: call.identity, logger: call.context.logger)
        return .jsonText(object ?? "null")
    }

    /// QuickBlox filters on the query string; `count=1` answers `{"count": n}`, otherwise
    /// `{"items": [...], "skip", "limit"}` with the objects in the Backendless form (the
    /// QuickBlox routes under `quickblox/` answer QuickBlox's own records).
    private func quickBlox(_ call: PublicCall) async throws -> Response {
        let filter = try QuickBloxFind(try call.dataQueryItems)
        if filter.countOnly {
            let count = try await engine.count(
                call.table, query: filter.query, identity: call.identity, logger: call.context.logger)
            return .json(.object(JSONObject([("count", .integer(Int64(count)))])))
        }
        let items = try await filter.items(call.table, engine: engine, call: call)
        let (skip, limit) = filter.answeredBounds
        return .json(
            .object(
                JSONObject([
                    ("skip", .integer(Int64(skip))), ("limit", .integer(Int64(limit))),
                    ("items", .array(items.map(JSONValue.raw))),
                ])))
    }

    /// BQL: `{"query": "[join r [having …]] where x > ?", "params": [...], "limit": n, "offset": n}`
    /// answers `{"objects": [...], "totalCount": n}` as Backbeam clients read them, each object
    /// carrying the relationships the query joins.
    private func bql(_ call: PublicCall) async throws -> Response {
        let body = try call.object
        let parameters = try Self.bqlList(body["params"]?.array ?? [])
        var query = FindQuery()
        let text = body["query"]?.string ?? ""
        let parsed = try DataError.parsing { () throws(QueryLanguageError) in
            try BQL.query(text, parameters: parameters)
        }
        query.condition = parsed.condition
        for join in parsed.joins {
            query.relationPaths.append([join.relation])
            if let having = join.having { query.relationConditions[join.relation] = having }
        }
        query.pageSize = Int(body["limit"]?.integerValue ?? Int64(FindQuery.defaultPageSize))
        query.offset = Int(body["offset"]?.integerValue ?? 0)
        guard (1...FindQuery.maximumPageSize).contains(query.pageSize), query.offset >= 0 else {
            throw DataError.invalidParameter("limit must be between 1 and 100, offset at least 0")
        }
        let identity = call.identity
        async let objects = engine.find(call.table, query: query, identity: identity, logger: call.context.logger)
        async let total = engine.count(call.table, query: query, identity: identity, logger: call.context.logger)
        let (page, count) = try await (objects, total)
        return .json(
            .object(JSONObject([("objects", .array(page.map(JSONValue.raw))), ("totalCount", .integer(Int64(count)))])))
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
