import DataAPI
import DataEngine
import Hummingbird
import InternalProtocol
import Permissions
import ServiceRuntime

extension DataRoutes {
    /// Single-object CRUD: every SDK generation's create, save, update, upsert, get and delete.
    func addObjects(to router: inout PublicRoutes) {
        router.add(.get, "data/:table/pk", permission: .data(.find)) { call in
            let items = try call.dataQueryItems
            guard !items.isEmpty else { throw DataError.invalidParameter("pk needs at least one column=value pair") }
            let object = try await engine.object(
                call.table, matching: items.map { ($0.name, $0.value) }, query: FindQuery(),
                identity: call.identity, logger: call.context.logger)
            guard let object else { throw DataError.entityNotFound(items.map(\.value).joined(separator: ",")) }
            return .jsonText(object)
        }
        // The engine checks each object's table and rights; no one operation describes a tree.
        router.add(.put, "data/:table/deep-save") { call in
            .json(try await engine.deepSave(call.table, object: try call.object, identity: call.identity, logger: call.context.logger))
        }
        router.add(.put, "data/:table/upsert") { call in
            .jsonText(try await engine.upsert(call.table, object: try call.object, identity: call.identity, logger: call.context.logger))
        }
        router.add(.post, "data/:table", permission: .data(.create)) { call in
            .jsonText(try await engine.create(call.table, object: try call.object, identity: call.identity, logger: call.context.logger))
        }
        router.add(.put, "data/:table") { call in
            .jsonText(try await engine.save(call.table, object: try call.object, identity: call.identity, logger: call.context.logger))
        }
        router.add(.delete, "data/:table", permission: .data(.remove)) { call in
            guard let id = try call.object["objectId"]?.string else {
                throw DataError.invalidBody("DELETE /data/{table} needs a body with the objectId")
            }
            return try await delete(call, id: id)
        }
        router.add(.get, "data/:table/:id", permission: .data(.find)) { call in
            let query = try FindQuery(try call.queryParameters, paged: false)
            return .jsonText(
                try await engine.object(
                    call.table, id: call.parameters["id"] ?? "", query: query, identity: call.identity,
                    logger: call.context.logger))
        }
        router.add(.put, "data/:table/:id", permission: .data(.update)) { call in
            .jsonText(
                try await engine.update(
                    call.table, id: call.parameters["id"] ?? "", changes: try call.object, identity: call.identity,
                    logger: call.context.logger))
        }
        router.add(.delete, "data/:table/:id", permission: .data(.remove)) { call in
            try await delete(call, id: call.parameters["id"] ?? "")
        }
    }

    private func delete(_ call: PublicCall, id: String) async throws -> Response {
        let time = try await engine.delete(call.table, id: id, identity: call.identity, logger: call.context.logger)
        return .json(.object(JSONObject([("deletionTime", .integer(time))])))
    }
}
