import DataEngine
import Hummingbird
import InternalProtocol
import ServiceRuntime

extension UserRoutes {
    /// Updating users, their status, password checks and the `Users` schema.
    func addProfiles(to router: inout PublicRoutes) {
        router.add(.put, "users/:id", doc: .updateUser) { call in
            let update = try await accounts.updateUser(
                id: call.parameters["id"] ?? "", body: try Self.body(call), identity: call.identity,
                logger: call.context.logger)
            return Response.jsonText(update.user).endingSessions(of: update.endedSessions ? call.parameters["id"] : nil)
        }
        router.add(.put, "users/:id/status", doc: .setUserStatus) { call in
            let id = call.parameters["id"] ?? ""
            _ = try await accounts.setStatus(
                id: id, body: try Self.body(call), identity: call.identity, logger: call.context.logger)
            return Response(status: .ok).endingSessions(of: id)
        }
        router.add(.post, "users/verifypassowrd", doc: .verifyPassword) { call in
            let valid = try await accounts.verifyPassword(
                body: try Self.body(call), identity: call.identity, logger: call.context.logger)
            return .jsonText(JSONValue.object(JSONObject([("valid", .bool(valid))])).jsonText)
        }
        router.add(.get, "users/userclassprops", doc: .userClassProperties) { call in
            .jsonText(try await accounts.userClassProperties(appID: call.identity.appId, logger: call.context.logger))
        }
    }
}
