import DataAPI
import DataEngine
import Hummingbird
import InternalProtocol
import Permissions
import QueryLanguage
import ServiceRuntime

extension DataRoutes {
    /// Finds, counts, first/last and QuickBlox's filters in the Backendless answer form.
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
}
