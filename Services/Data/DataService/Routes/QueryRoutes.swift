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
    /// `{"items": [...], "skip", "limit"}` as QuickBlox clients read them.
    private func quickBlox(_ call: PublicCall) async throws -> Response {
        let parameters = try call.dataQueryItems
        let filter = try DataError.parsing { () throws(QueryLanguageError) in try QuickBloxFilter.parse(parameters) }
        var query = FindQuery()
        query.condition = filter.condition
        query.sort = filter.sort
        if let include = filter.include {
            query.properties = include.map { SelectItem(expression: .property(PropertyPath([$0])), alias: nil) }
        }
        query.excluded = filter.exclude ?? []
        let identity = call.identity
        if filter.countOnly {
            let count = try await engine.count(
                call.table, query: query, identity: identity, logger: call.context.logger)
            return .json(.object(JSONObject([("count", .integer(Int64(count)))])))
        }
        if filter.limit == -1 {
            let last = try await engine.edge(
                call.table, last: true, query: query, identity: identity, logger: call.context.logger)
            return quickBloxPage(last.map { [$0] } ?? [], skip: 0, limit: 1)
        }
        guard (1...100).contains(filter.limit), filter.skip >= 0 else {
            throw DataError.invalidParameter("limit must be between 1 and 100 (or -1), skip at least 0")
        }
        query.pageSize = filter.limit
        query.offset = filter.skip
        let items = try await engine.find(call.table, query: query, identity: identity, logger: call.context.logger)
        return quickBloxPage(items, skip: filter.skip, limit: filter.limit)
    }

    private func quickBloxPage(_ items: [String], skip: Int, limit: Int) -> Response {
        .json(
            .object(
                JSONObject([
                    ("skip", .integer(Int64(skip))), ("limit", .integer(Int64(limit))),
                    ("items", .array(items.map(JSONValue.raw))),
                ])))
    }
}
