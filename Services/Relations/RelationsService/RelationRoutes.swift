import DataAPI
import DataEngine
import Hummingbird
import InternalProtocol
import Permissions
import QueryLanguage
import ServiceRuntime

/// The relation API: `POST` (set), `PUT` (add) and `DELETE` on `data/{table}/{id}/{relation}`
/// with an array of child ids or `?whereClause=` (no body), answering a count; `GET` on the same
/// path and `POST …/load` answer a page of children. The parameter names match data-service's
/// `data/:table/:id`, so the gateway's router keeps one branch for both.
struct RelationRoutes {
    let engine: DataEngine

    func add(to router: inout PublicRoutes) {
        for (method, change, operation, doc) in [
            (HTTPRequest.Method.post, RelationChange.set, DataOperation.addRelation, RouteDoc.setRelation),
            (.put, .add, .addRelation, RouteDoc.addRelation),
            (.delete, .delete, .deleteRelation, RouteDoc.deleteRelation),
        ] {
            router.add(method, "data/:table/:id/:relation", permission: .data(operation), doc: doc) { call in
                try await self.change(change, call)
            }
        }
        router.add(.get, "data/:table/:id/:relation", permission: .data(.loadRelations), doc: .loadRelation) { call in
            try await load(call, try FindQuery(Self.renamingWhereClause(try call.queryParameters)))
        }
        router.add(
            .post, "data/:table/:id/:relation/load", permission: .data(.loadRelations), doc: .loadRelationByBody
        ) { call in
            try await load(call, try FindQuery(try call.bodyQueryParameters(renaming: ["whereClause": "where"])))
        }
    }

    private func change(_ change: RelationChange, _ call: PublicCall) async throws -> Response {
        let count = try await engine.changeRelation(
            change, table: call.table, parentID: call.parameters["id"] ?? "", argument: try Self.argument(call),
            children: try Self.children(call), identity: call.identity, logger: call.context.logger)
        return .json(.integer(Int64(count)))
    }

    private func load(_ call: PublicCall, _ query: FindQuery) async throws -> Response {
        .jsonArray(
            try await engine.loadRelation(
                table: call.table, parentID: call.parameters["id"] ?? "", argument: try Self.argument(call),
                query: query,
                identity: call.identity, logger: call.context.logger))
    }

    private static func argument(_ call: PublicCall) throws -> RelationColumnArgument {
        try RelationColumnArgument(call.parameters["relation"] ?? "")
    }

    /// `?whereClause=` (or `?where=`) on the child table, else the body's array of ids.
    private static func children(_ call: PublicCall) throws -> RelationChildren {
        let parameters = renamingWhereClause(try call.queryParameters)
        if let text = parameters.scalar("where"), !text.allSatisfy(\.isWhitespace) {
            return .matching(try DataError.parsing { () throws(QueryLanguageError) in try QueryParser.condition(text) })
        }
        guard let body = try call.json else {
            throw DataError.invalidBody("Name the children with a JSON array of objectIds or ?whereClause=")
        }
        return try RelationChildren(body: body)
    }

    /// The JS SDK sends `whereClause`; the rest of the data API reads `where`.
    private static func renamingWhereClause(_ parameters: QueryParameters) -> QueryParameters {
        var renamed = parameters
        if let clause = parameters.scalar("whereClause"), parameters.scalar("where") == nil {
            renamed.add("where", clause)
        }
        return renamed
    }
}
