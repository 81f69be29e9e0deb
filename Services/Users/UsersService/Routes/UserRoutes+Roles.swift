import DataEngine
import Hummingbird
import InternalProtocol
import ServiceRuntime

extension UserRoutes {
    /// The caller's and other users' roles, assigning them, members of a role, and (server-code
    /// key) creating and deleting custom roles.
    func addRoles(to router: inout PublicRoutes) {
        router.add(.get, "users/userroles", doc: .callerRoles) { call in
            Self.names(call.identity.roles)
        }
        router.add(.get, "users/userroles/:id", doc: .userRoles) { call in
            Self.names(
                try await accounts.roles(
                    ofUser: call.parameters["id"] ?? "", identity: call.identity, logger: call.context.logger))
        }
        router.add(.post, "users/assignRole", doc: .assignRole) { call in
            let userID = try await accounts.assignRole(
                body: try Self.body(call), identity: call.identity, logger: call.context.logger)
            return Response(status: .ok).endingSessions(of: userID)
        }
        router.add(.post, "users/unassignRole", doc: .unassignRole) { call in
            let userID = try await accounts.unassignRole(
                body: try Self.body(call), identity: call.identity, logger: call.context.logger)
            return Response(status: .ok).endingSessions(of: userID)
        }
        router.add(.get, "users/role/:name", doc: .roleMembers) { call in
            let items = try call.queryItems
            let loadRoles = items.last { $0.name == "loadRoles" }?.value == "true"
            let query = try FindQuery(QueryParameters(queryItems: items.filter { $0.name != "loadRoles" }))
            return .jsonText(
                try await accounts.users(
                    inRole: call.parameters["name"] ?? "", query: query, loadRoles: loadRoles, identity: call.identity,
                    logger: call.context.logger))
        }
        addRoleManagement(to: &router)
    }

    private func addRoleManagement(to router: inout PublicRoutes) {
        router.add(.get, "users/roles", doc: .customRoles) { call in
            Self.names(try await accounts.customRoles(identity: call.identity, logger: call.context.logger))
        }
        router.add(.put, "users/roles/:name", doc: .createRole) { call in
            let name = call.parameters["name"] ?? ""
            let created = try await accounts.createRole(name, identity: call.identity, logger: call.context.logger)
            return .jsonText(
                JSONValue.object(JSONObject([("name", .string(name))])).jsonText, status: created ? .created : .ok)
        }
        router.add(.delete, "users/roles/:name", doc: .deleteRole) { call in
            try await accounts.deleteRole(
                call.parameters["name"] ?? "", identity: call.identity, logger: call.context.logger)
            return Response(status: .ok)
        }
    }

    private static func names(_ names: [String]) -> Response {
        .jsonText(JSONValue.array(names.map(JSONValue.string)).jsonText)
    }
}
