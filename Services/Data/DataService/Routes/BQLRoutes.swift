import DataAPI
import DataEngine
import Hummingbird
import InternalProtocol
import Permissions
import QueryLanguage
import ServiceRuntime

extension DataRoutes {
    /// Backbeam's BQL.
    func addBQL(to router: inout PublicRoutes) {
        router.add(.post, "data/:table/bql", permission: .data(.find), doc: .bqlQuery) { call in
            try await bql(call)
        }
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
