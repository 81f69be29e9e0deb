import DataAPI
import DataEngine
import Hummingbird
import InternalProtocol
import Permissions
import ServiceRuntime

extension DataRoutes {
    /// Single-object CRUD: every SDK generation's create, save, update, upsert, get and delete.
    func addObjects(to router: inout PublicRoutes) {
        router.add(.get, "data/:table/pk", permission: .data(.find), doc: .findByKey) { call in
            let items = try call.dataQueryItems
            guard !items.isEmpty else { throw DataError.invalidParameter("pk needs at least one column=value pair") }
            let object = try await engine.object(
                call.table, matching: items.map { ($0.name, $0.value) }, query: FindQuery(),
                identity: call.identity, logger: call.context.logger)
            guard let object else { throw DataError.entityNotFound(items.map(\.value).joined(separator: ",")) }
            return .jsonText(object)
        }
        // The engine checks each object's table and rights; no one operation describes a tree.
        router.add(.put, "data/:table/deep-save", doc: .deepSave) { call in
            .json(
                try await engine.deepSave(
                    call.table, object: try call.object, identity: call.identity, logger: call.context.logger))
        }
        router.add(.put, "data/:table/upsert", doc: .upsertObject) { call in
            .jsonText(
                try await engine.upsert(
                    call.table, object: try call.object, identity: call.identity, logger: call.context.logger))
        }
        router.add(.post, "data/:table", permission: .data(.create), doc: .createObject) { call in
            let object = try call.object
            if let user = try await savingUser(call, object, id: nil) { return user }
            return .jsonText(
                try await engine.create(
                    call.table, object: object, identity: call.identity, logger: call.context.logger))
        }
        router.add(.put, "data/:table", doc: .saveObject) { call in
            let object = try call.object
            if let user = try await savingUser(call, object, id: object["objectId"]?.string) { return user }
            return .jsonText(
                try await engine.save(call.table, object: object, identity: call.identity, logger: call.context.logger))
        }
        router.add(.delete, "data/:table", permission: .data(.remove), doc: .deleteObjectByBody) { call in
            guard let id = try call.object["objectId"]?.string else {
                throw DataError.invalidBody("DELETE /data/{table} needs a body with the objectId")
            }
            return try await delete(call, id: id)
        }
        router.add(.get, "data/:table/:id", permission: .data(.find), doc: .getObject) { call in
            let query = try FindQuery(try call.queryParameters, paged: false)
            return .jsonText(
                try await engine.object(
                    call.table, id: call.parameters["id"] ?? "", query: query, identity: call.identity,
                    logger: call.context.logger))
        }
        router.add(.put, "data/:table/:id", permission: .data(.update), doc: .updateObject) { call in
            let (id, changes) = (call.parameters["id"] ?? "", try call.object)
            if let user = try await savingUser(call, changes, id: id) { return user }
            return .jsonText(
                try await engine.update(
                    call.table, id: id, changes: changes, identity: call.identity, logger: call.context.logger))
        }
        router.add(.delete, "data/:table/:id", permission: .data(.remove), doc: .deleteObject) { call in
            try await delete(call, id: call.parameters["id"] ?? "")
        }
    }

    /// A save to `Users` carrying a password goes to users-service, which alone keeps credentials:
    /// it registers (no id) or updates and re-hashes (an id) as the users API would. So does an
    /// update carrying an email or the identity property, which `PUT /users/{id}` changes under
    /// its rules. Nil for any other save, which the engine guards as it guards every write to
    /// `Users` (``UsersTableGuard``).
    private func savingUser(_ call: PublicCall, _ object: JSONObject, id: String?) async throws -> Response? {
        guard UsersTableGuard.guards(call.table), try await isUsersServiceSave(call, object, id: id) else { return nil }
        let answer = try await peers.call(
            SaveUser.self, SaveUser.Request(objectId: id, object: JSONValue.object(object).jsonText), on: .users,
            context: call.context)
        return Response.jsonText(answer.user).endingSessions(of: answer.endedSessions ? id : nil)
    }

    /// Whether a save to `Users` is users-service's: a password, or an update of an email or identity.
    private func isUsersServiceSave(_ call: PublicCall, _ object: JSONObject, id: String?) async throws -> Bool {
        if Self.carriesPassword(object) { return true }
        guard id != nil else { return false }
        let table = try await engine.tableSchema(call.table, appID: call.identity.appId)
        return UsersTableGuard.usersAPIProperty(in: object, table: table) != nil
    }

    /// A bulk create of `Users` whose objects carry passwords is a registration of each, in
    /// users-service (``RegisterUsers``: all or none); nil for any other bulk create.
    func registeringUsers(_ call: PublicCall, _ objects: [JSONObject]) async throws -> [String]? {
        guard UsersTableGuard.guards(call.table), objects.contains(where: Self.carriesPassword) else { return nil }
        let request = RegisterUsers.Request(objects: objects.map { JSONValue.object($0).jsonText })
        return try await peers.call(RegisterUsers.self, request, on: .users, context: call.context).ids
    }

    private static func carriesPassword(_ object: JSONObject) -> Bool {
        object.members.contains { $0.key.lowercased() == "password" }
    }

    private func delete(_ call: PublicCall, id: String) async throws -> Response {
        let time = try await engine.delete(call.table, id: id, identity: call.identity, logger: call.context.logger)
        return .json(.object(JSONObject([("deletionTime", .integer(time))])))
    }
}
