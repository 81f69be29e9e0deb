import DataAPI
import DataEngine
import Hummingbird
import InternalProtocol
import Permissions
import QueryLanguage
import ServiceRuntime

/// The public `/data` endpoints. Literal segments are registered before `:id` so that
/// `first`, `last`, `pk`, `count`, `properties` and the rest are never read as object ids.
struct DataRoutes {
    let engine: DataEngine
    /// Other services: users-service takes saves to `Users` that carry a password.
    let peers: InternalClient

    func add(to router: inout PublicRoutes) {
        router.publish(DataSchemas.all)
        router.publish(PermissionSchemas.all)
        addSettings(to: &router)
        addPermissions(to: &router)
        addBulk(to: &router)
        addSchema(to: &router)
        addQueries(to: &router)
        QuickBloxRoutes(engine: engine).add(to: &router)
        addBQL(to: &router)
        addObjects(to: &router)
        router.add(.post, "transaction/unit-of-work", doc: .unitOfWork) { call in
            let work = try UnitOfWork(body: try call.json)
            return .json(try await engine.execute(work, identity: call.identity, logger: call.context.logger))
        }
    }

    /// The table bulk removals name in the description's examples (one a fuzzer may empty).
    static let cleared = DocumentExamples.named(DocumentExamples.clearedTable)

    /// Parses a where clause from a request; an empty clause is nil.
    static func condition(_ text: String?) throws -> Condition? {
        guard let text, !text.allSatisfy(\.isWhitespace) else { return nil }
        return try DataError.parsing { () throws(QueryLanguageError) in try QueryParser.condition(text) }
    }

    private func addSettings(to router: inout PublicRoutes) {
        router.add(.get, "data/_settings", doc: .dataSettings) { call in
            .json(try await engine.settings(identity: call.identity))
        }
        router.add(.put, "data/_settings", doc: .setDataSettings) { call in
            guard let enabled = try call.object["dynamicSchema"]?.boolValue else {
                throw DataError.invalidBody("Expected {\"dynamicSchema\": true|false}")
            }
            return .json(
                try await engine.setDynamicSchema(enabled, identity: call.identity, logger: call.context.logger))
        }
    }

    private func addBulk(to router: inout PublicRoutes) {
        router.add(.post, "data/bulk/:table", permission: .data(.create), doc: .createBulk) { call in
            let objects = try call.objects
            let ids =
                if let registering = try await registeringUsers(call, objects) {
                    registering
                } else {
                    try await engine.createBulk(
                        call.table, objects: objects, identity: call.identity, logger: call.context.logger)
                }
            return .json(.array(ids.map(JSONValue.string)))
        }
        router.add(.put, "data/bulkupsert/:table", doc: .upsertBulk) { call in
            let ids = try await engine.upsertBulk(
                call.table, objects: try call.objects, identity: call.identity, logger: call.context.logger)
            return .json(.array(ids.map(JSONValue.string)))
        }
        router.add(.put, "data/bulk/:table", permission: .data(.update), doc: .updateBulk) { call in
            let condition = try Self.condition(try call.queryParameters.scalar("where"))
            let count = try await engine.updateBulk(
                call.table, condition: condition, changes: try call.object, identity: call.identity,
                logger: call.context.logger)
            return .json(.integer(Int64(count)))
        }
        router.add(
            .delete, "data/bulk/:table", permission: .data(.remove), doc: .deleteBulk.path("table", Self.cleared)
        ) {
            call in
            // The body is read as POST's is: a malformed one was ignored, and the request then removed
            // every object; a body's `where` counts when the query has none.
            let body = try call.json
            let whereText = try call.queryParameters.scalar("where") ?? Self.whereMember(body)
            return try await bulkDelete(call, whereText: whereText, body: body)
        }
        router.add(
            .post, "data/bulk/:table/delete", permission: .data(.remove),
            doc: .deleteBulkByBody.path("table", Self.cleared)
        ) { call in
            let body = try call.json
            return try await bulkDelete(call, whereText: try Self.whereMember(body), body: body)
        }
    }

    /// A bulk body's `where`: absent (or null) or text. Anything else is refused rather than read
    /// as no condition, which would remove every object.
    private static func whereMember(_ body: JSONValue?) throws -> String? {
        switch body {
        case nil, .array?: return nil
        case .object(let object)?:
            switch object["where"] {
            case nil, .null?: return nil
            case .string(let text)?: return text
            default: throw DataError.invalidBody("'where' must be a condition's text")
            }
        default: throw DataError.invalidBody("Expected {\"where\": \"…\"} or an array of object ids")
        }
    }

    /// Deletes by where clause, or (4.x) by a JSON array of objects or ids in the body.
    private func bulkDelete(_ call: PublicCall, whereText: String?, body: JSONValue?) async throws -> Response {
        var condition = try Self.condition(whereText)
        if condition == nil, let items = body?.array {
            let ids = items.compactMap { $0.string ?? $0.object?["objectId"]?.string }
            guard ids.count == items.count else {
                throw DataError.invalidBody("Expected object ids or objects with objectId")
            }
            condition = .membership(
                .property(PropertyPath(["objectId"])), ids.map(ValueExpression.string), negated: false)
        }
        let count = try await engine.deleteBulk(
            call.table, condition: condition, identity: call.identity, logger: call.context.logger)
        return .json(.integer(Int64(count)))
    }
}
