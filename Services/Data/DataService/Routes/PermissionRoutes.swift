import DataAPI
import DataEngine
import Hummingbird
import InternalProtocol
import Permissions
import ServiceRuntime

extension DataRoutes {
    /// Permissions: `PUT /data/{t}/permissions/{GRANT|DENY|INHERIT}/{objectId}` (object ACL; the
    /// Permission right on the object), `PUT /data/{t}/permissions/{GRANT|DENY|INHERIT}` (table,
    /// or with `*` as the table the global matrix) and `PUT /data/{t}/permissions/owner/{…}`
    /// (owner policy), the last two with the server-code key. Bodies: `{"permission": "FIND",
    /// "user": "<id>|*"}` or `{"permission": …, "role": "<name>|*"}`. `GET` on the same paths
    /// reads them back (the object's ACL with the Permission right, the rest with the server-code key).
    func addPermissions(to router: inout PublicRoutes) {
        router.add(.get, "data/:table/permissions", doc: .tablePermissions) { call in
            .json(
                try await engine.rulePermissions(table: call.table == "*" ? nil : call.table, identity: call.identity))
        }
        router.add(.get, "data/:table/permissions/:target", doc: .objectPermissions) { call in
            .json(
                try await engine.objectPermissions(
                    table: call.table, objectID: call.parameters["target"] ?? "", identity: call.identity,
                    logger: call.context.logger))
        }
        router.add(
            .put, "data/:table/permissions/owner/:action", options: .permissionChange, doc: .setOwnerPolicy
        ) { call in
            let (decision, operation, _) = try Self.permission(call)
            try await engine.setOwnerPolicy(
                decision, operation: operation, table: call.table, identity: call.identity, logger: call.context.logger)
            return Response(status: .ok)
        }
        router.add(
            .put, "data/:table/permissions/:target/:objectId", options: .permissionChange, doc: .setObjectPermission
        ) { call in
            let (decision, operation, principal) = try Self.permission(call)
            try await engine.setObjectPermission(
                PermissionChange(decision: decision, operation: operation, principal: principal), table: call.table,
                objectID: call.parameters["objectId"] ?? "", identity: call.identity, logger: call.context.logger)
            return Response(status: .ok)
        }
        router.add(
            .put, "data/:table/permissions/:target", options: .permissionChange, doc: .setTablePermission
        ) { call in
            let (decision, operation, principal) = try Self.permission(call)
            try await engine.setRulePermission(
                PermissionChange(decision: decision, operation: operation, principal: principal),
                table: call.table == "*" ? nil : call.table, identity: call.identity, logger: call.context.logger)
            return Response(status: .ok)
        }
    }

    /// The action (GRANT, DENY, or INHERIT as nil), the operation and the principal of a
    /// permission request; 1022 for anything else. A body naming neither user nor role means
    /// every role, as the JS SDK sends it.
    private static func permission(_ call: PublicCall) throws -> (PermissionDecision?, DataOperation, Principal) {
        let action = (call.parameters["target"] ?? call.parameters["action"] ?? "").uppercased()
        guard action == "INHERIT" || PermissionDecision(rawValue: action) != nil else {
            throw DataError.invalidBody("The permission action must be GRANT, DENY or INHERIT, not '\(action)'")
        }
        let body = try call.object
        guard let name = body["permission"]?.string, let operation = DataOperation(permissionName: name) else {
            throw DataError.invalidBody(
                "'permission' must be one of FIND, UPDATE, REMOVE, ADD, DESCRIBE, PERMISSION, LOAD_RELATIONS, ADD_RELATION, DELETE_RELATION"
            )
        }
        let principal: Principal
        if let user = body["user"]?.string, !user.isEmpty {
            principal = .user(user)
        } else if let role = body["role"]?.string, !role.isEmpty {
            principal = .role(role)
        } else {
            principal = .role(Principal.everyone)
        }
        return (PermissionDecision(rawValue: action), operation, principal)
    }
}
